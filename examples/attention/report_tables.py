#!/usr/bin/env python3
"""The attention report's tables (examples/attention/README.md) from bench_attention's JSON.

    python3 examples/attention/report_tables.py study JSON        Algorithm 0 / 1 / Flash2 per N
    python3 examples/attention/report_tables.py peer JSON...      Flash2 against torch SDPA
    python3 examples/attention/report_tables.py blockm JSON...    the effect of M on Algorithm 1
    python3 examples/attention/report_tables.py grid JSON...      torch / Ember per configuration,
                                                                  one column per pass and thread count
                                                                  (the median where rounds repeat a cell)
    python3 examples/attention/report_tables.py turns JSON...     the same grid from bench_in_turns.py's
                                                                  JSON: the median of each cell's per-pair
                                                                  ratios, its lowest pair in parentheses
    python3 examples/attention/report_tables.py sgemm ATTN SGEMM...  Flash2's non-causal forward in GFLOP/s
                                                                  (4 N^2 d per head) against the best rate of
                                                                  bench_matmul's JSON of the same round, in pairs

Only the standard library: it runs under any python3.
"""
import json
import statistics
import sys

MIB = 1024.0 * 1024.0


def load(path):
    with open(path) as f:
        return json.load(f)


def rows_of(doc):
    """(N, d, causal, mode, heads) -> {impl: result} for one bench_attention JSON."""
    out = {}
    for r in doc["results"]:
        key = (r["n"], r["d"], r["causal"], r["mode"], doc.get("heads", 1) * doc.get("batch", 1))
        out.setdefault(key, {})[r["impl"]] = r
    return out


def fmt(x, digits=2):
    return "-" if x is None else "{:.{}f}".format(x, digits)


def table(head, lines):
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for cells in lines:
        print("| " + " | ".join(cells) + " |")


def study(doc, mode, causal):
    """One row per (N, d): the three algorithms' time, CPU time, memory and counted traffic."""
    head = ["N", "d", "standard ms", "flash ms", "flash2 ms", "flash / standard", "standard cpu_ms", "flash cpu_ms",
            "standard peak MiB", "flash peak MiB", "standard traffic MiB", "flash traffic MiB", "torch SDPA ms"]
    lines = []
    for (n, d, c, m, _), v in sorted(rows_of(doc).items()):
        if m != mode or c != causal:
            continue
        s, f, f2 = v.get("standard"), v.get("flash"), v.get("flash2")
        get = lambda r, k, scale=1.0: None if r is None else r[k] / scale
        traffic = lambda r: None if r is None else (r["read_bytes"] + r["write_bytes"]) / MIB
        torch = next((r["torch"]["ms"] for r in v.values() if r.get("torch")), None)
        ratio = None if s is None or f is None else f["median_ms"] / s["median_ms"]
        lines.append([str(n), str(d), fmt(get(s, "median_ms")), fmt(get(f, "median_ms")), fmt(get(f2, "median_ms")),
                      fmt(ratio), fmt(get(s, "cpu_ms")), fmt(get(f, "cpu_ms")), fmt(get(s, "peak_extra_bytes", MIB)),
                      fmt(get(f, "peak_extra_bytes", MIB)), fmt(traffic(s), 1), fmt(traffic(f), 1), fmt(torch)])
    table(head, lines)


def peer(docs):
    """Flash2 against torch SDPA: time of each and torch / Ember (> 1: Ember is faster)."""
    head = ["threads", "B*H", "N", "d", "causal", "mode", "Ember flash2 ms", "torch SDPA ms", "torch / Ember"]
    lines = []
    for doc in docs:
        for (n, d, c, m, bh), v in sorted(rows_of(doc).items()):
            r = v.get("flash2")
            if r is None or not r.get("torch"):
                continue
            t = r["torch"]["ms"]
            lines.append([str(doc["threads"]), str(bh), str(n), str(d), "yes" if c else "no", m, fmt(r["median_ms"]),
                          fmt(t), fmt(t / r["median_ms"])])
    table(head, lines)


def grid(docs):
    """torch SDPA time / Ember Flash2 time (> 1: Ember is faster), a row per (B*H, N, d, causal).
    A cell measured in several files (rounds of the same grid) shows the median of its ratios."""
    cells, threads = {}, sorted({doc["threads"] for doc in docs})
    for doc in docs:
        for (n, d, c, m, bh), v in rows_of(doc).items():
            r = v.get("flash2")
            if r is not None and r.get("torch"):
                cell = cells.setdefault((bh, n, d, c), {})
                cell.setdefault((m, doc["threads"]), []).append(r["torch"]["ms"] / r["median_ms"])
    cols = [(m, t) for m in ("fwd", "fwd+bwd") for t in threads]
    head = ["B*H", "N", "d", "causal"] + ["{} {}t".format(m, t) for m, t in cols]
    median = lambda xs: None if not xs else statistics.median(xs)
    lines = [[str(bh), str(n), str(d), "yes" if c else "no"] + [fmt(median(v.get(col))) for col in cols]
             for (bh, n, d, c), v in sorted(cells.items())]
    table(head, lines)


def turns(docs):
    """The grid of bench_in_turns.py: SDPA's time / Ember's (> 1: Ember is faster), the median of
    the pairs timed in turns, then the lowest pair, a row per (B*H, N, d, causal)."""
    cells, threads = {}, sorted({doc["threads"] for doc in docs})
    for doc in docs:
        for r in doc["results"]:
            cells.setdefault((r["heads"], r["n"], r["d"], r["causal"]), {})[(r["mode"], doc["threads"])] = r
    cols = [(m, t) for m in ("fwd", "fwd+bwd") for t in threads]
    head = ["B*H", "N", "d", "causal"] + ["{} {}t".format(m, t) for m, t in cols]
    cell = lambda r: "-" if r is None else "{} ({})".format(fmt(r["ratio"]), fmt(r["ratio_min"]))
    lines = [[str(bh), str(n), str(d), "yes" if c else "no"] + [cell(v.get(col)) for col in cols]
             for (bh, n, d, c), v in sorted(cells.items())]
    table(head, lines)


def sgemm(pairs):
    """Flash2's forward rate as a share of Ember's own sgemm rate (the issue's 60% goal): each
    bench_attention JSON is paired with the bench_matmul JSON of the same round and thread count,
    whose best square is the yardstick. Causal rows are left out: their work depends on how the
    masked blocks are counted."""
    head = ["threads", "B*H", "N", "d", "forward ms", "GFLOP/s", "sgemm GFLOP/s", "share"]
    lines = []
    for attn, mm in pairs:
        squares = [r["gflops"] for r in mm["results"] if r.get("m") == r.get("n") == r.get("k")]
        if not squares:
            raise SystemExit("report_tables.py sgemm: the bench_matmul JSON paired with an attention JSON of {} "
                             "thread(s) has no square product (bench_matmul --sizes)".format(attn.get("threads")))
        best = max(squares)
        heads = attn.get("heads", 1) * attn.get("batch", 1)
        for r in attn["results"]:
            if r["impl"] != "flash2" or r["mode"] != "fwd" or r["causal"]:
                continue
            rate = 4.0 * heads * r["n"] ** 2 * r["d"] / (r["median_ms"] * 1e-3) / 1e9
            lines.append([str(attn["threads"]), str(heads), str(r["n"]), str(r["d"]), fmt(r["median_ms"], 1),
                          fmt(rate, 0), fmt(best, 0), "{:.0f}%".format(100.0 * rate / best)])
    table(head, lines)


def blockm(docs):
    head = ["M (floats)", "Bc, Br", "traffic MiB", "model N²d²/M (MiB)", "ms", "cpu_ms", "peak MiB"]
    lines = []
    for doc in sorted(docs, key=lambda x: x["block_m"]):
        for r in doc["results"]:
            if r["impl"] != "flash" or r["mode"] != "fwd":
                continue
            m, d = doc["block_m"], r["d"]
            bc = -(-m // (4 * d))
            lines.append([str(m), "{}, {}".format(bc, min(bc, d)), fmt((r["read_bytes"] + r["write_bytes"]) / MIB),
                          fmt(r["model1_bytes"] / MIB), fmt(r["median_ms"]), fmt(r["cpu_ms"]),
                          fmt(r["peak_extra_bytes"] / MIB)])
    table(head, lines)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("study", "peer", "grid", "turns", "sgemm", "blockm"):
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "sgemm" and len(argv) % 2:
        sys.stderr.write("report_tables.py sgemm: give the files in pairs, ATTN SGEMM ATTN SGEMM ...\n")
        return 2
    docs = [load(p) for p in argv[2:]]
    if argv[1] == "study":
        for mode in ("fwd", "fwd+bwd"):
            for causal in (False, True):
                print("\n{}, {}:\n".format("forward" if mode == "fwd" else "forward + backward",
                                           "causal" if causal else "non-causal"))
                study(docs[0], mode, causal)
    elif argv[1] == "peer":
        peer(docs)
    elif argv[1] == "grid":
        grid(docs)
    elif argv[1] == "turns":
        turns(docs)
    elif argv[1] == "sgemm":
        sgemm(list(zip(docs[0::2], docs[1::2])))
    else:
        blockm(docs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
