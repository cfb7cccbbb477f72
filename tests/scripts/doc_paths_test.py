#!/usr/bin/env python3
"""Checks that the documents name only paths that exist.

- examples/autodiff/autodiff.tex: every \\path{...} and \\input{...} (relative to the repository root,
  else to examples/autodiff/, where the document is built).
- The top-level documents and every study report: every relative Markdown link, and every
  `backticked` path that starts with one of the source folders and names a file with an extension
  (globs, braces and placeholders such as OUT or <x> are skipped).

Run as `python3 tests/scripts/doc_paths_test.py`; exits 1 and lists what is missing.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("framework/", "ops/", "models/", "examples/", "scripts/", "tests/", "python/", "benchmarks/")
DOCS = ["README.md", "NOTES.md", "ARCHITECTURE.md", "RELIABILITY.md", "python/README.md"]
DOCS += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("examples/*/*.md"))


def exists(rel, *bases):
    return any((base / rel).exists() for base in bases)


def tex_problems():
    tex = ROOT / "examples/autodiff/autodiff.tex"
    text = tex.read_text()
    out = []
    for m in re.finditer(r"\\(path|input)\{([^}]*)\}", text):
        rel = m.group(2)
        if m.group(1) == "input" and not rel.endswith(".tex"):
            rel += ".tex"
        if not exists(rel, ROOT, tex.parent):
            out.append(f"{tex.relative_to(ROOT)}: \\{m.group(1)}{{{m.group(2)}}}")
    return out


def md_problems(doc):
    path = ROOT / doc
    text = path.read_text()
    out = []
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"[a-z]+:", target):
            continue
        if not exists(target, path.parent):
            out.append(f"{doc}: link {m.group(1)}")
    for m in re.finditer(r"`([^`\s]+)`", text):
        rel = m.group(1).rstrip(".,:;")
        if not rel.startswith(SOURCE_DIRS) or re.search(r"[*{}<>$|\[\]]|OUT|DIR|PATH|\.\.\.", rel):
            continue
        if not re.search(r"\.[A-Za-z0-9]+$", rel.split(":")[0]):
            continue
        rel = rel.split(":")[0]  # file.py:57 -> file.py
        if not exists(rel, ROOT, path.parent):
            out.append(f"{doc}: `{m.group(1)}`")
    return out


def main():
    problems = tex_problems()
    for doc in DOCS:
        if (ROOT / doc).exists():
            problems += md_problems(doc)
        else:
            problems.append(f"{doc}: missing")
    for p in problems:
        print("missing:", p)
    print(f"doc_paths_test: {len(problems)} missing path(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
