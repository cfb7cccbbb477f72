#!/usr/bin/python3
"""Checks the plan that `scripts/gpu_check.sh --dry-run` recorded, so that the one GPU call cannot
fail on a typo: every step's program is built by the build step or is a tool of the GPU image
(scripts/gpu_image.txt), every script exists and compiles, every Python import (followed into the
repository's own modules) is the standard library's, the image's or the repository's, every gtest
filter matches tests of a CPU build's ember_tests, every file scripts/gpu_report.py reads is
written by some step, and the step limits add up to within the budget.

    python3 scripts/gpu_check_plan.py PLAN.tsv --budget 470 --build-dir build-gpu --list-build build

PLAN.tsv: one step a line, tab-separated: name, limit in seconds, then the command's arguments.
Exit status 0 when every check passed; each failure is printed.
"""
import argparse
import ast
import fnmatch
import os
import py_compile
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALL_LIMIT = 480  # the GPU call: 8 minutes in all (the GPU issue's rule), the rerun's time kept free


def read_image(path):
    sections, cur = {}, None
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            cur = sections.setdefault(line.strip("[]"), set())
        else:
            cur.add(line)
    return sections


def read_plan(path):
    steps = []
    for n, line in enumerate(open(path), 1):
        fields = line.rstrip("\n").split("\t")
        if len(fields) < 3:
            raise SystemExit(f"{path}:{n}: expected name, limit and a command")
        steps.append((fields[0], fields[1], fields[2:]))
    return steps


def cmake_targets():
    """Every target the CMake files define, by name (build folders and hidden ones skipped)."""
    names = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        if dirpath == ROOT:
            dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for fn in filenames:
            if fn == "CMakeLists.txt" or fn.endswith(".cmake"):
                text = open(os.path.join(dirpath, fn), errors="replace").read()
                for m in re.finditer(r"\b(?:add_executable|add_library|nanobind_add_module)\(\s*([\w.+-]+)", text):
                    names.add(m.group(1))
    return names


class Checker:
    def __init__(self, image, build_dir, list_build):
        self.image = image
        self.build_dir = build_dir.rstrip("/")
        self.list_build = list_build
        self.errors = []
        self.checked_modules = set()
        self._tests = None

    def fail(self, step, msg):
        self.errors.append(f"{step}: {msg}")

    # ---- Python ----
    def local_module(self, name, roots):
        for r in roots:
            for cand in (os.path.join(r, name + ".py"), os.path.join(r, name, "__init__.py")):
                if os.path.exists(cand):
                    return cand
        return None

    def check_python(self, step, path, roots):
        """path compiles; each import is stdlib, the image's, or a repository module (checked in turn)."""
        path = os.path.normpath(path)
        if path in self.checked_modules:
            return True
        self.checked_modules.add(path)
        try:
            with tempfile.TemporaryDirectory() as d:
                py_compile.compile(path, cfile=os.path.join(d, "x.pyc"), doraise=True)
        except py_compile.PyCompileError as e:
            self.fail(step, f"{os.path.relpath(path, ROOT)} does not compile: {e.msg.strip()}")
            return False
        tree = ast.parse(open(path).read(), path)
        roots = [os.path.dirname(path)] + list(roots)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for full in names:
                top = full.split(".")[0]
                local = self.local_module(top, roots)
                if local:
                    self.check_python(step, local, roots[1:])
                elif top not in sys.stdlib_module_names and top not in self.image["python"]:
                    self.fail(step, f"{os.path.relpath(path, ROOT)} imports {top}, which the GPU image does not hold "
                                    "(scripts/gpu_image.txt)")
        return True

    # ---- gtest filters ----
    def tests(self):
        if self._tests is None:
            exe = os.path.join(self.list_build, "bin", "ember_tests")
            if not os.access(exe, os.X_OK):
                raise SystemExit(f"gpu_check_plan: {exe} is not built (build ember_tests first: its test names check the filters)")
            out = subprocess.run([exe, "--gtest_list_tests"], capture_output=True, text=True, check=True).stdout
            names, suite = [], None
            for line in out.splitlines():
                if not line.strip():
                    continue
                if not line.startswith(" "):
                    suite = line.split("#")[0].strip()
                else:
                    names.append(suite + line.split("#")[0].strip())
            self._tests = names
        return self._tests

    def cuda_in_list_build(self):
        """Whether the CPU build compiled the CUDA backend (its CUDA tests then exist, and skip)."""
        return os.path.exists(os.path.join(self.list_build, "lib", "libember_cuda.so"))

    def check_filter(self, step, flt):
        positive = flt.split("-", 1)[0]
        for pat in filter(None, positive.split(":")):
            if not any(fnmatch.fnmatchcase(t, pat) for t in self.tests()):
                self.fail(step, f"--gtest_filter pattern '{pat}' matches no test of ember_tests")

    # ---- the flags a program or script is given ----
    def help_text(self, exe):
        path = os.path.join(self.list_build, "bin", exe)
        if not os.access(path, os.X_OK):
            return None
        res = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=60)
        return res.stdout + res.stderr

    def check_flags(self, step, what, flags, known):
        for f in flags:
            if f.split("=", 1)[0] not in known:
                self.fail(step, f"{what} has no flag {f.split('=', 1)[0]}")

    @staticmethod
    def argparse_flags(path):
        """The option strings of every add_argument call in a script."""
        known = {"-h", "--help"}
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                known |= {a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")}
        return known

    # ---- one step ----
    def check_step(self, name, argv, targets, pythonpath):
        prog_i = 0
        while prog_i < len(argv) and (argv[prog_i] == "env" or re.match(r"^[A-Z_][A-Z0-9_]*=", argv[prog_i])):
            prog_i += 1
        if prog_i == len(argv):
            self.fail(name, "no program to run")
            return
        prog = argv[prog_i]
        bin_prefix = self.build_dir + "/bin/"
        if prog in self.image["tools"]:
            pass
        elif prog.startswith(bin_prefix):
            pass  # checked with every token below
        elif os.path.exists(os.path.join(ROOT, prog)):
            path = os.path.join(ROOT, prog)
            if not os.access(path, os.X_OK):
                self.fail(name, f"{prog} is not executable")
            if open(path).readline().startswith("#!") and "bash" in open(path).readline():
                if subprocess.run(["bash", "-n", path], capture_output=True).returncode != 0:
                    self.fail(name, f"{prog} has a bash syntax error")
        else:
            self.fail(name, f"{prog} is neither a tool of the GPU image (scripts/gpu_image.txt) nor a file of the repository")
        for i, tok in enumerate(argv):
            if tok.startswith(bin_prefix):
                exe = tok[len(bin_prefix):]
                if exe not in targets:
                    self.fail(name, f"{tok} is not built by the build step (its --target list: {' '.join(sorted(targets))})")
                flags = [a for a in argv[i + 1:] if a.startswith("--") and not a.startswith("--gtest_")]
                text = self.help_text(exe)
                if text is None and self.cuda_in_list_build():
                    self.fail(name, f"{self.list_build}/bin/{exe} is missing from a CUDA build (build it: its --help checks the flags)")
                elif text is None:
                    print(f"gpu_check_plan: {name}: the flags of {exe} not checked ({self.list_build}/bin/{exe} is not built)")
                else:
                    self.check_flags(name, exe, flags, set(re.findall(r"--[\w-]+", text)))
            elif tok.startswith("--gtest_filter="):
                if self.cuda_in_list_build():
                    self.check_filter(name, tok.split("=", 1)[1])
                else:
                    print(f"gpu_check_plan: {name}: gtest filter not checked ({self.list_build} was built without CUDA)")
            elif tok == "-m" and i + 1 < len(argv) and i > 0 and os.path.basename(argv[i - 1]).startswith("python"):
                if argv[i + 1] not in self.image["python"]:
                    self.fail(name, f"python -m {argv[i + 1]}: not in the GPU image")
            elif tok.endswith(".py") and not tok.startswith("-"):
                path = os.path.join(ROOT, tok)
                if not os.path.exists(path):
                    self.fail(name, f"{tok} does not exist")
                elif self.check_python(name, path, pythonpath):
                    if "pytest" not in argv:  # pytest's own flags come before the file
                        self.check_flags(name, tok, [a for a in argv[i + 1:] if a.startswith("-")], self.argparse_flags(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--build-dir", required=True, help="the GPU build folder the plan names")
    ap.add_argument("--list-build", required=True, help="a CPU build whose ember_tests lists the test names")
    ap.add_argument("--image", default=os.path.join(ROOT, "scripts", "gpu_image.txt"))
    ap.add_argument("--report-inputs", default="", help="comma-separated files the report reads (default: gpu_report.INPUTS)")
    args = ap.parse_args()

    steps = read_plan(args.plan)
    c = Checker(read_image(args.image), args.build_dir, args.list_build)
    defined = cmake_targets()
    build = [s for s in steps if "--build" in s[2] and "--target" in s[2]]
    if len(build) != 1:
        raise SystemExit("gpu_check_plan: expected exactly one build step (cmake --build DIR --target ...)")
    argv = build[0][2]
    targets = set(argv[argv.index("--target") + 1:])
    for t in sorted(targets - defined):
        c.fail(build[0][0], f"target {t} is not defined by any CMakeLists.txt or .cmake file")
    # The Python the steps run sees the repository's python/ (the staged ember) and tests/python.
    pythonpath = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "python")]

    seen, total = set(), 0
    for name, limit, argv in steps:
        if name in seen:
            c.fail(name, "two steps of this name (their logs would overwrite each other)")
        seen.add(name)
        if not limit.isdigit() or int(limit) <= 0:
            c.fail(name, f"limit '{limit}' is not a positive number of seconds")
            continue
        total += int(limit)
        c.check_step(name, argv, targets, pythonpath)

    if args.budget > CALL_LIMIT:
        c.errors.append(f"budget {args.budget}s is over the call's {CALL_LIMIT}s")
    if total > args.budget:
        c.errors.append(f"the step limits add up to {total}s, over the budget of {args.budget}s")

    # Every file the report reads must be written by some step (a step NAME writes NAME.log).
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gpu_report
    inputs = args.report_inputs.split(",") if args.report_inputs else gpu_report.INPUTS
    tokens = " ".join(" ".join(a) for _, _, a in steps)
    logs = {name + ".log" for name, _, _ in steps}
    for f in inputs:
        if f not in logs and not re.search(r"(^|[/\s=:])" + re.escape(f) + r"($|\s)", tokens):
            c.errors.append(f"gpu_report.py reads {f}, which no step writes")

    for name, limit, argv in steps:
        print(f"{name:24s} {limit:>4s}s  {' '.join(argv)[:110]}")
    print(f"{len(steps)} steps, limits adding up to {total}s of a {args.budget}s budget ({CALL_LIMIT}s call)")
    for e in c.errors:
        print("FAIL", e)
    if c.errors:
        sys.exit(1)
    print("dry run: every check passed")


if __name__ == "__main__":
    main()
