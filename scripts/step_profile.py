#!/usr/bin/env python3
"""Shares of a training step's time by op and direction, from `perf script` of a DWARF-unwound record.

    OMP_NUM_THREADS=2 perf record -F 999 --call-graph dwarf,16384 -o step.data \\
        build/bin/gpt2 train-step --steps 30
    perf script -i step.data | scripts/step_profile.py

Each sample is charged to the outermost op on its stack: an op's kernel (a lambda inside
`<name>_primitive()` or a `Primitive<...>::Def::run` under `ember::<name>`) in the forward, or its VJP
rule under the autograd engine's `run_backward` in the backward; the optimizer (clip_grad_norm,
AdamW), allocation (the caching allocator, malloc, page faults) and OpenMP waiting (libgomp's
barriers and spinning) are charged as such wherever they fall, since they are what the issue asks for.
OpenMP's worker threads are counted apart (waiting, or working in a region). Samples before the
first and after the last step (start-up, model building) are left out.
"""
import collections
import re
import signal
import sys

GOMP_WAIT = re.compile(r"gomp_(team_)?barrier|do_spin|do_wait|gomp_mutex_lock|futex_wait|gomp_sem_wait")
ALLOC = re.compile(r"CachingAllocator|\bmalloc\b|\bfree\b|_int_malloc|_int_free|cfree|operator new|operator delete|"
                   r"page_fault|do_anonymous_page|clear_page|mmap|munmap")
# Kernels and VJP rules are std::function objects: the handler's second template argument names
# the function that defined the lambda (matmul_primitive(), BinaryPrims::add, layer_norm_op(), ...).
HANDLER = re.compile(r"^std::_Function_handler<.*?const&\), (.*)$")
ATTRS = re.compile(r"Primitive<ember::(?:\(anonymous namespace\)::)?(\w+)>::(?:apply|Def::run|Def::backward)")
NAMED = [re.compile(r"(\w+)_primitive\(\)(?!.*unary_primitive)"), re.compile(r"BinaryPrims::(\w+)"),
         re.compile(r"Prims::(\w+)"), re.compile(r"(\w+)_op\(\)")]


def op_of(outer_first, fs):
    """The op of the outermost kernel or VJP rule in outer_first; None if none."""
    tentative = None
    for f in outer_first:
        m = HANDLER.match(f)
        inner = m.group(1) if m else f
        if not m and not ATTRS.search(f):
            continue
        if "UnaryPrims::UnaryPrims()" in inner:  # the fused VJPs declared in UnaryPrims' constructor
            return "gelu_tanh (fused)"
        if inner.startswith("ember::(anonymous namespace)::unary_primitive"):
            u = next((re.search(r"UnaryPrims::(\w+)", g) for g in fs if "UnaryPrims::" in g), None)
            return u.group(1) if u else "unary"
        a = ATTRS.search(inner)
        if a:
            if a.group(1) not in ("NoAttrs",):
                tentative = tentative or a.group(1).replace("Attrs", "").replace("Options", "").lower()
            continue
        for r in NAMED:
            n = r.search(inner)
            if n:
                return n.group(1)
    return tentative


def frames(block):
    out = []
    for line in block[1:]:
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            out.append(re.sub(r"\+0x[0-9a-f]+ \(.*\)$", "", parts[1]))
    return out  # innermost first


def classify(fs):
    outer_first = fs[::-1]
    worker = any("start_thread" in f for f in fs) and any("libgomp" in f or "gomp_thread_start" in f for f in fs)
    if worker and not any("train_step" in f for f in fs):
        # OpenMP's worker threads: their stacks end at the parallel region's body, not at the op.
        leaf = fs[0] if fs else ""
        waiting = GOMP_WAIT.search(leaf) or "libgomp" in leaf
        return "worker thread: OpenMP waiting" if waiting else "worker thread: in a parallel region"
    if not any("train_step" in f for f in outer_first) or any(
            re.search(r"GPT2::GPT2|AdamW::AdamW|randint", f) for f in fs):
        return None  # start-up, model building, the batches, exit
    leaf = fs[0] if fs else ""
    wait = GOMP_WAIT.search(leaf) or ("libgomp" in leaf and "GOMP_parallel" not in leaf)
    if any("clip_grad_norm" in f for f in fs):
        return "optimizer: clip_grad_norm" + (" (omp wait)" if wait else "")
    if any("Optimizer::step" in f or "adam_update" in f for f in fs):
        return "optimizer: AdamW" + (" (omp wait)" if wait else "")
    if any("zero_grad" in f for f in fs):
        return "optimizer: zero_grad"
    backward = any("run_backward" in f for f in fs)
    if wait:
        return ("backward" if backward else "forward") + ": OpenMP waiting"
    if any(ALLOC.search(f) for f in fs[:6]):
        return ("backward" if backward else "forward") + ": allocation"
    start = 0
    if backward:
        start = next(i for i, f in enumerate(outer_first) if "run_backward" in f)
    op = op_of(outer_first[start:], fs)
    if backward and op is None and any("accumulate" in f or "add_grad" in f for f in fs):
        op = "(gradient accumulation)"
    return ("backward: " if backward else "forward: ") + (op or "(other)")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    text = sys.stdin.read()
    counts = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    for block in text.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        fs = frames(lines)
        c = classify(fs)
        if c is None:
            continue
        counts[c] += 1
        leaves[c][fs[0] if fs else "?"] += 1
    total = sum(counts.values())
    if not total:
        sys.exit("no samples inside train_step (was the record taken with --call-graph dwarf?)")
    print(f"{total} samples in the step")
    for k, v in counts.most_common():
        top = ", ".join(f"{l[:60]} {100 * n / v:.0f}%" for l, n in leaves[k].most_common(2))
        print(f"{100 * v / total:6.1f}%  {k:<42} [{top}]")


if __name__ == "__main__":
    main()
