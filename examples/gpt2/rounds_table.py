#!/usr/bin/python3
"""The median over rounds of bench_rounds.sh's runs, as a markdown table.

    /usr/bin/python3 examples/gpt2/rounds_table.py OUTDIR

OUTDIR holds rR_tT/ember.json and rR_tT/torch.json (round R, T threads), as bench_rounds.sh writes
them. Per thread count and case: Ember's and PyTorch's medians over the rounds, the ratio of the
medians (Ember's speed over PyTorch's), and the range of the per-round ratios, which shows how far
one round alone could have misled. Only the standard library."""
import json
import os
import re
import sys


def median(xs):
    xs = sorted(xs)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def cases(ember, torch):
    """(name, Ember value, PyTorch value, higher is better) for one round."""
    out = [("prefill, %d tokens (ms)" % ember["prompt_len"], ember["prefill_s"] * 1e3, torch["prefill_s"] * 1e3, False)]
    for a in ember["rows"]:
        b = next((r for r in torch["rows"] if r["generated"] == a["generated"] and r["cache"] == a["cache"]), None)
        if b is None:
            continue
        mode = "with the cache" if a["cache"] else "without the cache"
        out.append(("%d tokens %s (tok/s)" % (a["generated"], mode), a["tokens_per_s"], b["tokens_per_s"], True))
        if a["cache"] and "decode_tokens_per_s" in a and "decode_tokens_per_s" in b:
            out.append(("the %d decode steps %s (tok/s)" % (a["generated"] - 1, mode), a["decode_tokens_per_s"],
                        b["decode_tokens_per_s"], True))
    return out


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.exit("usage: rounds_table.py OUTDIR (a folder of rR_tT/ember.json and torch.json)")
    root = argv[1]
    runs = {}
    for name in sorted(os.listdir(root)):
        m = re.fullmatch(r"r(\d+)_t(\d+)", name)
        e, t = (os.path.join(root, name, f) for f in ("ember.json", "torch.json"))
        if m and os.path.isfile(e) and os.path.isfile(t):
            with open(e) as fe, open(t) as ft:
                runs.setdefault(int(m.group(2)), []).append((json.load(fe), json.load(ft)))
    if not runs:
        sys.exit("rounds_table.py: no rR_tT/ember.json with torch.json beside it in " + root)
    print("| threads | case | rounds | Ember (median) | PyTorch (median) | Ember speed / PyTorch's | per-round range |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for threads in sorted(runs):
        table = {}
        for ember, torch in runs[threads]:
            for name, e, p, higher in cases(ember, torch):
                table.setdefault(name, (higher, [], []))[1].append(e)
                table[name][2].append(p)
        for name, (higher, es, ps) in table.items():
            me, mp = median(es), median(ps)
            ratio = (lambda e, p: e / p) if higher else (lambda e, p: p / e)
            per = [ratio(e, p) for e, p in zip(es, ps)]
            print("| %d | %s | %d | %.2f | %.2f | %.2fx | %.2f-%.2fx |" % (threads, name, len(es), me, mp, ratio(me, mp),
                                                                      min(per), max(per)))
    floor_table(runs)


def floor_table(runs):
    """Ember's cached decode steps against the read bandwidth probed right after each run (gpt2
    bench's decode_percent_of_floor_per_run; runs before it have no such field and are left out)."""
    lines = []
    for threads in sorted(runs):
        for row in runs[threads][0][0]["rows"]:
            if not row["cache"] or "decode_percent_of_floor_per_run" not in row:
                continue
            shares = [share for ember, _ in runs[threads] for r in ember["rows"]
                      if r["cache"] and r["generated"] == row["generated"]
                      for share in r.get("decode_percent_of_floor_per_run", [])]
            lines.append("| %d | %d | %d | %.0f%% | %.0f-%.0f%% |" % (threads, row["generated"] - 1, len(shares),
                                                                  median(shares), min(shares), max(shares)))
    if lines:
        print()
        print("| threads | decode steps | runs | Ember against the floor probed after each run (median) | range |")
        print("|---:|---:|---:|---:|---|")
        print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv)
