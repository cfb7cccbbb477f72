"""Timing two programs in turns, call by call, in one process, for the benchmarks that compare Ember
with PyTorch from Python (examples/attention/bench_in_turns.py, examples/gpt2/prefill_in_turns.py).

On a VM whose speed drifts by up to 1.5x within a minute, one side's run
and the other's, a minute apart in two processes, can land in different phases of the host. Here
every repeat makes one call of each, the order swapped from one repeat to the next, and the ratio
reported is the median of the per-repeat ratios, so that each comparison is between calls made one
right after the other."""
import os
import platform
import statistics
import time


def time_in_turns(first, second, repeats, warmup_s=0.2, clock=time.perf_counter):
    """Calls first() and second() `repeats` times each, alternating which goes first, after at least
    warmup_s seconds (and one call) of each untimed. Returns (first's times, second's times) in seconds,
    pair by pair."""
    for f in (first, second):
        t0 = clock()
        f()
        while clock() - t0 < warmup_s:
            f()
    ta, tb = [], []
    for r in range(repeats):
        order = ((first, ta), (second, tb)) if r % 2 == 0 else ((second, tb), (first, ta))
        for f, times in order:
            t0 = clock()
            f()
            times.append(clock() - t0)
    return ta, tb


def summarise(ember_s, torch_s):
    """Medians in ms and the median of the per-pair ratios torch / Ember (above 1: Ember faster)."""
    if len(ember_s) != len(torch_s) or not ember_s:
        raise ValueError(f"summarise: expected the same number (> 0) of timings per side, got {len(ember_s)} "
                         f"and {len(torch_s)}")
    ratios = [t / e for e, t in zip(ember_s, torch_s)]
    return {"ember_ms": statistics.median(ember_s) * 1e3, "torch_ms": statistics.median(torch_s) * 1e3,
            "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios)}


def cpu_name():
    """The model name, family and model from /proc/cpuinfo (platform.processor() is empty on Linux)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.machine()
    return (f"{fields.get('model name', platform.machine())} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')})")


def set_threads(threads, wait_policy=""):
    """Before ember or torch is imported: both OpenMP runtimes read these once, when they start.
    Above one thread an idle runtime's workers would otherwise spin for milliseconds after each call
    on the cores the other side is about to use; passive sends them to sleep at once. Returns the
    policy set ("" for OpenMP's own)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    policy = wait_policy or ("passive" if threads > 1 else "")
    if policy:
        os.environ["OMP_WAIT_POLICY"] = policy
    return policy
