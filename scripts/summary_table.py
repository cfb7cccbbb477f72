#!/usr/bin/python3
"""Renders the JSON that scripts/bench_summary.sh wrote into one Markdown table: Ember against its
peer (PyTorch 2.x, SciPy) row by row, at each thread count measured, with the ratio. A ratio above
1 means Ember is faster. Rows whose JSON is missing say "not measured".

    python3 scripts/summary_table.py results/summary > summary.md
    python3 scripts/summary_table.py --compact results/summary    (one row per case, threads side by side)
"""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, unit):
    if v is None:
        return "not measured"
    if unit == "GFLOP/s":
        return f"{v:.1f} GFLOP/s"
    if unit == "tok/s":
        return f"{v:.2f} tok/s"
    if unit == "us":
        return f"{v:.3f} us"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.3f} ms"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, threads, ember, peer, peer_name, unit, higher_is_better=False, ratio=None):
        """ratio: Ember's speed / the peer's, given where it is not the ratio of the two figures (rows
        timed in turns give the median of their per-pair ratios)."""
        if ratio is None and ember is not None and peer is not None:
            ratio = ember / peer if higher_is_better else peer / ember
        self.rows.append((what, threads, fmt(ember, unit), fmt(peer, unit), peer_name,
                          "-" if ratio is None else f"{ratio:.2f}x"))

    def compact(self):
        """One row per case and peer, one column group per thread count: Ember, peer, ratio."""
        threads = sorted({r[1] for r in self.rows if isinstance(r[1], int)})
        groups = {}
        for what, th, e, p, peer, ratio in self.rows:
            groups.setdefault((what, peer), {})[th] = (e, p, ratio)
        head = "| case | peer | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}: Ember / peer (ratio)" for t in threads) + " |"
        out = [head, "|---|---|" + "---|" * len(threads)]
        for (what, peer), by in groups.items():
            cells = [f"{by[t][0]} / {by[t][1]} (**{by[t][2]}**)" if t in by else "not measured" for t in threads]
            out.append(f"| {what} | {peer} | " + " | ".join(cells) + " |")
        return "\n".join(out)

    def markdown(self):
        out = ["| case | threads | Ember | peer | peer is | Ember speed / peer's |", "|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(out)


def matmul_rows(t, d, threads):
    ember = load(os.path.join(d, f"matmul_t{threads}.json"))
    torch = load(os.path.join(d, f"matmul_torch_t{threads}.json"))
    if not ember:
        return
    tmm = {}
    for r in (torch or {}).get("results", []):
        tmm[(r["m"], r["k"], r["n"])] = r["gflops"]
    for r in ember["results"]:
        if r["variant"] != "packed":
            continue
        transposed = r.get("b_transposed", False)
        shape = (r["m"], r["k"], r["n"])
        def peer(variant):
            return next((b for b in ember["results"] if b["variant"] == variant and
                         (b["m"], b["k"], b["n"]) == shape and b.get("b_transposed", False) == transposed
                         and b["gflops"] > 0), None)
        blas, mkl = peer("blas"), peer("mkl")
        # MKL took turns with Ember: the median of the per-round ratios where the JSON has it.
        mkl_ratio = (mkl or {}).get("packed_speedup_in_turns") or None
        blas, mkl = blas and blas["gflops"], mkl and mkl["gflops"]
        if r["label"].startswith("n="):
            label = r["label"]
        elif transposed:
            label = f"{r['m']}x{r['k']} @ ({r['n']}x{r['k']})^T"
        else:
            label = f"{r['m']}x{r['k']} @ {r['k']}x{r['n']}"
        # MKL called in bench_matmul's own process, timed in turns with Ember, where it ran; else
        # torch.mm timed by the Python peer in a separate run (row-major B only).
        if mkl is not None:
            t.add(f"sgemm {label}", threads, r["gflops"], mkl, "MKL (torch's, same process)", "GFLOP/s", True,
                  ratio=mkl_ratio)
        else:
            t.add(f"sgemm {label}", threads, r["gflops"], None if transposed else tmm.get(shape), "torch.mm (MKL)",
                  "GFLOP/s", True)
        if blas is not None:
            t.add(f"sgemm {label}", threads, r["gflops"], blas, "OpenBLAS", "GFLOP/s", True)


GEMV_LABELS = {"xW": "x @ W", "xWt": "x @ W^T", "Wv": "W @ v", "Wtv": "W^T @ v"}


def gemv_rows(t, d, threads):
    """From gemv.json (bench_gemv, one file for every thread count): Ember's time per product against
    MKL's better of sgemv and sgemm, timed in turns in the same process, W read from DRAM."""
    doc = load(os.path.join(d, "gemv.json"))
    for r in (doc or {}).get("results", []):
        if r["threads"] != threads or "mkl_gemv_s" not in r:
            continue
        what = f"GEMV {GEMV_LABELS.get(r['layout'], r['layout'])}, W {r['rows']}x{r['cols']} from DRAM"
        t.add(what, threads, r["ember_s"] * 1e3, min(r["mkl_gemv_s"], r["mkl_gemm_s"]) * 1e3,
              "MKL sgemv/sgemm (same process)", "ms")


def classifier_rows(t, d):
    doc = load(os.path.join(d, "classifier", "bench_vs_torch.json"))
    if not doc:
        for th in (1, 2):
            t.add("MLP 784-256-128-10, one epoch", th, None, None, "PyTorch eager", "ms")
        return
    med = {r["config"]: r["median_epoch_seconds"] * 1e3 for r in doc["rows"]}
    torch1 = med.get("torch_t1_b1")
    torch2 = min((v for k, v in med.items() if k.startswith("torch")), default=None)
    t.add("MLP 784-256-128-10, one epoch", 1, med.get("ember_t1"), torch1, "PyTorch eager", "ms")
    t.add("MLP 784-256-128-10, one epoch", 2, med.get("ember_t2"), torch2, "PyTorch eager", "ms")  # its best thread layout


def cnn_rows(t, d):
    """The CNN training step (batch 128, AdamW) of cnn_step.jsonl: bench_cnn_vs_torch.sh's JSON lines,
    Ember and PyTorch alternated run by run; the median step of each side per thread count."""
    try:
        with open(os.path.join(d, "cnn_step.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError):
        return
    steps = [r for r in lines if "layer" not in r and "step_ms" in r]
    for th in sorted({r["threads"] for r in steps}):
        ember = [r["step_ms"] for r in steps if r["threads"] == th and r["framework"] == "ember"]
        torch = [r["step_ms"] for r in steps if r["threads"] == th and r["framework"].startswith("torch")]
        if ember and torch:
            batch = steps[0].get("batch", "?")
            t.add(f"CNN training step (2 conv + BN + pool, linear head), batch {batch}", th, median(ember), median(torch),
                  "PyTorch eager (oneDNN), alternated runs", "ms")


PEER_FORMAT = {("torch", "f32"): "f32", ("torch", "bf16"): "bf16", ("torch", "int8"): "int8",
               ("llama.cpp", "F32"): "f32", ("llama.cpp", "F16"): "bf16", ("llama.cpp", "Q8_0"): "int8"}
PEER_LABEL = {"torch": "PyTorch {f} (bench_torch.py; int8: quantize_dynamic)", "llama.cpp": "llama.cpp {f} (llama-bench)"}


def weights_rows(t, d):
    """GPT-2 124M decode and prefill by weight format (weights/raw.json of bench_weights.py): each
    Ember format against the peer's nearest one (bf16 against llama.cpp's F16, int8 against Q8_0),
    medians over the rounds."""
    doc = load(os.path.join(d, "weights", "raw.json"))
    if not doc:
        return
    runs = doc.get("runs", [])
    for (side, pfmt), efmt in PEER_FORMAT.items():
        for th in sorted({r["threads"] for r in runs}):
            mine = [r for r in runs if r["side"] == "ember" and r["format"] == efmt and r["threads"] == th]
            peer = [r for r in runs if r["side"] == side and r["format"] == pfmt and r["threads"] == th]
            if not mine or not peer:
                continue
            label = PEER_LABEL[side].format(f=pfmt)
            t.add(f"GPT-2 124M decode, {efmt} weights, KV cache", th, median([r["decode"] for r in mine]),
                  median([r["decode"] for r in peer]), label, "tok/s", higher_is_better=True)
            t.add(f"GPT-2 124M prefill, 128 tokens, {efmt} weights", th, median([r["prefill"] for r in mine]),
                  median([r["prefill"] for r in peer]), label, "tok/s", higher_is_better=True)


def median(xs):
    xs = sorted(xs)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def median_run(docs):
    """One gpt2 bench (or peer) JSON whose figures are the medians of those of `docs` (rounds)."""
    out = {"prompt_len": docs[0]["prompt_len"], "prefill_s": median([x["prefill_s"] for x in docs]), "rows": []}
    for r0 in docs[0]["rows"]:
        same = [r for x in docs for r in x["rows"] if r["generated"] == r0["generated"] and r["cache"] == r0["cache"]]
        row = {"generated": r0["generated"], "cache": r0["cache"], "tokens_per_s": median([r["tokens_per_s"] for r in same])}
        if all("decode_tokens_per_s" in r for r in same):
            row["decode_tokens_per_s"] = median([r["decode_tokens_per_s"] for r in same])
        out["rows"].append(row)
    return out


def gpt2_runs(d, threads):
    """(Ember's, PyTorch's, peer label, per-round ratios or None): from gpt2_rounds/rR_tT/
    (examples/gpt2/bench_rounds.sh, Ember and PyTorch taking turns; each side's median of the rounds,
    and the median of the rounds' ratios) where present, else from one run gpt2_tT/."""
    rounds = []
    for e_path in sorted(glob.glob(os.path.join(d, "gpt2_rounds", f"r*_t{threads}", "ember.json"))):
        e, p = load(e_path), load(os.path.join(os.path.dirname(e_path), "torch.json"))
        if e and p:
            rounds.append((e, p))
    if rounds:
        return (median_run([e for e, _ in rounds]), median_run([p for _, p in rounds]),
                f"nanoGPT-style PyTorch (median of {len(rounds)} rounds)", rounds)
    return (load(os.path.join(d, f"gpt2_t{threads}", "ember.json")), load(os.path.join(d, f"gpt2_t{threads}", "torch.json")),
            "nanoGPT-style PyTorch", None)


def row_of(doc, a):
    """The row of a gpt2 bench JSON with row a's length and cache setting, or None."""
    return next((r for r in doc["rows"] if r["generated"] == a["generated"] and r["cache"] == a["cache"]), None)


def round_ratio(rounds, speed):
    """The median over rounds of speed(ember, torch) (Ember's speed / PyTorch's), where every round
    has it; None without rounds. A round puts the two sides minutes apart at most, so its ratio
    is free of the VM's slower and faster phases, which can put either side's median in the wrong
    one (benchmarks/2026-12-05-intel-xeon-avx512-model207/summary_s9: one-thread prefill medians of
    236 and 220 ms, 0.93x, from rounds whose own ratios were 1.20x, 0.93x and 1.11x)."""
    if not rounds:
        return None
    ratios = [speed(e, p) for e, p in rounds]
    return None if any(r is None for r in ratios) else median(ratios)


def gpt2_rows(t, d, threads):
    e, p, peer, rounds = gpt2_runs(d, threads)
    if not e or not p:
        return
    t.add(f"GPT-2 124M prefill, {e['prompt_len']} tokens", threads, e["prefill_s"] * 1e3, p["prefill_s"] * 1e3, peer, "ms",
          ratio=round_ratio(rounds, lambda x, y: y["prefill_s"] / x["prefill_s"]))
    for a in e["rows"]:
        b = row_of(p, a)

        def rate(key):
            def speed(x, y):
                rx, ry = row_of(x, a), row_of(y, a)
                return rx[key] / ry[key] if rx and ry and key in rx and key in ry else None
            return round_ratio(rounds, speed)
        what = f"GPT-2 decode, {a['generated']} tokens, {'KV cache' if a['cache'] else 'no cache'}"
        t.add(what, threads, a["tokens_per_s"], b and b["tokens_per_s"], peer, "tok/s", True, ratio=rate("tokens_per_s"))
        if a["cache"] and "decode_tokens_per_s" in a:  # the steps after the prompt's pass alone
            t.add(f"GPT-2 decode with the KV cache, the {a['generated'] - 1} steps after the prompt", threads,
                  a["decode_tokens_per_s"], b and b.get("decode_tokens_per_s"), peer, "tok/s", True,
                  ratio=rate("decode_tokens_per_s"))


def attention_rows(t, d, threads):
    """From attention_tT_rR.json (rounds: the median of each side over them, and the median of the
    rounds' ratios) where present, else from the one run attention_tT.json."""
    docs = [x for x in (load(p) for p in sorted(glob.glob(os.path.join(d, f"attention_t{threads}_r*.json")))) if x]
    rounds = len(docs)
    if not docs:
        doc = load(os.path.join(d, f"attention_t{threads}.json"))
        docs = [doc] if doc else []
    if not docs:
        return
    by = {}
    for doc in docs:
        for r in doc["results"]:
            if r["impl"] == "flash2" and "torch" in r:
                by.setdefault((r["mode"], r["n"], r["d"], r["causal"]), []).append(r)
    for (mode, n, dim, causal), rs in by.items():
        impl = rs[0]["torch"]["impl"]
        peer = "torch SDPA" if "sdpa" in impl.lower() or "scaled" in impl else impl
        if rounds:
            peer += f" (median of {rounds} rounds)"
        t.add(f"attention {mode}, N={n}, d={dim}{', causal' if causal else ''}", threads,
              median([r["median_ms"] for r in rs]), median([r["torch"]["ms"] for r in rs]), peer, "ms",
              ratio=median([r["torch"]["ms"] / r["median_ms"] for r in rs]) if rounds else None)


def turns_rows(t, d, threads):
    """Rows timed in turns, call by call, in one process (examples/common/in_turns.py): the
    attention cells of attention_turns_tT.json (examples/attention/bench_in_turns.py), the prefill
    of gpt2_prefill_turns_tT.json and the decode step without the cache of
    gpt2_nocache_step_turns_tT.json (both examples/gpt2/prefill_in_turns.py). Their ratio is the
    median of the per-pair ratios; the times are each side's median."""
    doc = load(os.path.join(d, f"attention_turns_t{threads}.json"))
    for r in (doc or {}).get("results", []):
        heads = f", {r['heads']} heads" if r.get("heads", 1) > 1 else ""
        t.add(f"attention {r['mode']}, N={r['n']}, d={r['d']}{heads}{', causal' if r['causal'] else ''}", threads,
              r["ember_ms"], r["torch_ms"], f"torch SDPA (in turns, {doc['repeats']} pairs)", "ms", ratio=r["ratio"])
    doc = load(os.path.join(d, f"gpt2_prefill_turns_t{threads}.json"))
    if doc:
        t.add(f"GPT-2 124M prefill, {doc['prompt_len']} tokens", threads, doc["ember_ms"], doc["torch_ms"],
              f"nanoGPT-style PyTorch (in turns, {doc['repeats']} pairs)", "ms", ratio=doc["ratio"])
    doc = load(os.path.join(d, f"gpt2_nocache_step_turns_t{threads}.json"))
    if doc:
        t.add(f"GPT-2 decode without the cache, one step at {doc['prompt_len']} tokens", threads, doc["ember_ms"],
              doc["torch_ms"], f"nanoGPT-style PyTorch (in turns, {doc['repeats']} pairs)", "ms", ratio=doc["ratio"])


def training_rows(t, d, threads):
    """Full GPT training steps (forward, loss, backward, clipping, AdamW, zero_grad) of
    gpt2_train_turns_tT.json (examples/gpt2/train_in_turns.py): PyTorch eager laid out as nanoGPT,
    and torch.compile where it ran, each timed in turns with Ember."""
    doc = load(os.path.join(d, f"gpt2_train_turns_t{threads}.json"))
    for r in (doc or {}).get("results", []):
        for peer in ("torch eager", "torch.compile"):
            if f"{peer} ms" in r:
                t.add(f"GPT training step, {r['config']} ({r['shape']})", threads, r["ember ms"], r[f"{peer} ms"],
                      f"nanoGPT-style PyTorch, {peer.split()[-1]} (in turns, {r['repeats']} pairs)", "ms",
                      ratio=r[f"ember vs {peer}"])


def autograd_rows(t, d, threads):
    doc = load(os.path.join(d, f"autograd_t{threads}.json"))
    if not doc or not doc.get("pytorch"):
        return
    e, p, ops = doc["ember"], doc["pytorch"], doc["ops"]
    t.add("recorded op, forward + backward", threads, e["chain_total_s"] / ops * 1e6, p["chain_total_s"] / ops * 1e6,
          "PyTorch eager", "us")
    t.add(f"MLP 784-256-10 step, batch {doc['batch']}", threads, e["mlp_step_s"] * 1e3, p["mlp_step_s"] * 1e3,
          "PyTorch eager", "ms")


def sparse_rows(t, d):
    doc = load(os.path.join(d, "sparse.json"))
    if not doc:
        return
    for kind in ("spmv", "spgemm"):
        for r in doc.get(kind, []):
            if "scipy_ms" not in r:
                continue
            for th in doc.get("threads", [1]):
                key = f"ember_t{th}_ms"
                if key in r:
                    t.add(f"{'SpMV' if kind == 'spmv' else 'SpGEMM A A'} n={r['n']}, density {r['density']:g}", th,
                          r[key], r["scipy_ms"], "SciPy (1 thread)", "ms")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    d = args[0] if args else "results/summary"
    compact = "--compact" in sys.argv
    threads = sorted({int(m.group(1)) for p in glob.glob(os.path.join(d, "matmul_t*.json"))
                      if (m := re.search(r"matmul_t(\d+)\.json$", p))})
    t = Table()
    for th in threads:
        matmul_rows(t, d, th)
    for th in threads:
        gemv_rows(t, d, th)
    classifier_rows(t, d)
    cnn_rows(t, d)
    for th in threads:
        gpt2_rows(t, d, th)
    for th in threads:
        attention_rows(t, d, th)
    for th in threads:
        turns_rows(t, d, th)
    for th in threads:
        training_rows(t, d, th)
    weights_rows(t, d)
    for th in threads:
        autograd_rows(t, d, th)
    sparse_rows(t, d)
    machine = open(os.path.join(d, "machine.txt")).read().strip().splitlines() if os.path.exists(
        os.path.join(d, "machine.txt")) else []
    peer = load(os.path.join(d, "peer.json")) or {}
    print(f"Measured {machine[0] if machine else '(date unknown)'}; "
          f"{machine[1].split(':', 1)[1].strip() if len(machine) > 1 else 'CPU unknown'}, {os.cpu_count()} cores; "
          f"load before: {machine[2].split('load average:')[-1].strip() if len(machine) > 2 else 'unknown'}.")
    if peer:
        print(f"Peer: {peer.get('info', {}).get('summary', peer.get('python', '?'))}.")
    print("Command: `scripts/bench_summary.sh results/summary`. Ratio = Ember's speed / the peer's (above 1: Ember faster).")
    print("Rows timed in rounds or in turns show each side's median time and, as the ratio, the median of the rounds' "
          "(or pairs') own ratios, which need not be the ratio of the two medians.")
    print()
    print(t.compact() if compact else t.markdown())


if __name__ == "__main__":
    main()
