#!/usr/bin/env python3
"""The classifier report's "what reaches 90%" table from the runs' metrics.json files.

  python3 examples/classifier/accuracy_table.py DIR/classifier_90

DIR/classifier_90 holds one folder per run (scripts/bench_reports.sh DIR classifier_90 makes them),
each with the train_classifier options it ran under in options.txt. Rows with the same options but
the seed are merged into one (seeds 0 / 1 / 2). Training seconds are the sum of the logged epochs.
"""
import json
import os
import sys
from collections import OrderedDict


def main(root):
    rows = OrderedDict()
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        metrics = os.path.join(folder, "metrics.json")
        if not os.path.isfile(metrics):
            continue
        options_file = os.path.join(folder, "options.txt")
        if not os.path.isfile(options_file):
            sys.exit(f"accuracy_table: {folder} has metrics.json but no options.txt (the options it ran with); "
                     "expected the folders that `scripts/bench_reports.sh DIR classifier_90` writes")
        with open(options_file) as f:
            options = f.read().split()
        with open(metrics) as f:
            m = json.load(f)
        seed = m["config"]["seed"]
        key = " ".join(o for i, o in enumerate(options)
                       if o != "--seed" and (i == 0 or options[i - 1] != "--seed"))
        rows.setdefault(key, []).append((seed, m["test"]["accuracy"], m["train_seconds"], m["config"]["threads"]))
    if not rows:
        sys.exit(f"accuracy_table: no run folders with metrics.json under {root}")
    print("| options | seeds | test accuracy | training time |")
    print("|---|---|---:|---:|")
    for key, runs in rows.items():
        runs.sort()
        seeds = " / ".join(str(s) for s, _, _, _ in runs)
        acc = " / ".join(f"{100 * a:.2f}%" for _, a, _, _ in runs)
        secs = [t for _, _, t, _ in runs]
        time = f"{min(secs):.0f} s" if max(secs) - min(secs) < 0.5 else f"{min(secs):.0f}-{max(secs):.0f} s"
        print(f"| {'`' + key + '`' if key else '(defaults)'} | {seeds} | {acc} | {time} |")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    main(sys.argv[1])
