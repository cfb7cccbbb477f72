#!/usr/bin/python3
"""Markdown tables for the report from bench_sparse's JSON (median, and minimum in brackets).

Usage: /usr/bin/python3 examples/sparse/report_tables.py RESULTS.json
"""
import json
import sys


def cell(r, key, digits=3):
    if key + "_ms" not in r:
        return "-"
    med = r[key + "_ms"]
    mn = r.get(key + "_min_ms")
    f = lambda v: f"{v:.{digits}g}"
    return f"{f(med)} ({f(mn)})" if mn is not None else f(med)


def ratio(r, num, den):
    if num + "_ms" not in r or den + "_ms" not in r:
        return "-"
    s = f"{r[num + '_ms'] / r[den + '_ms']:.2f}"
    if num + "_min_ms" in r and den + "_min_ms" in r:
        s += f" ({r[num + '_min_ms'] / r[den + '_min_ms']:.2f})"
    return s


def table(res, op):
    t = max(res["threads"])
    rows = res[op]
    extra = "B/nnz | GB/s |" if op == "spmv" else "mul-adds |"
    print(f"| n | density | nnz | {extra} Ember 1t | Ember {t}t | SciPy | SciPy / Ember {t}t | SciPy / Ember 1t "
          f"| NumPy dense | Ember dense | Ember {t}t + setup | SciPy + setup | others |")
    print("|" + "---|" * (15 if op == "spmv" else 14))
    for r in rows:
        if "skipped" in r:
            print(f"| {r['n']} | {r['density']:g} | skipped: {r['skipped']} |" + " |" * (12 if op == "spmv" else 11))
            continue
        if op == "spmv":
            extra = f"{r['bytes_per_nnz']:.1f} | {r.get('ember_gbs', float('nan')):.1f} |"
        else:
            extra = f"{r.get('products', 0):.2g} |"
        print(f"| {r['n']} | {r['density']:g} | {r['nnz']} | {extra} {cell(r, 'ember_t1')} | {cell(r, f'ember_t{t}')} | "
              f"{cell(r, 'scipy')} | {ratio(r, 'scipy', f'ember_t{t}')} | {ratio(r, 'scipy', 'ember_t1')} | "
              f"{cell(r, 'numpy_dense')} | {cell(r, 'dense')} | {cell(r, f'ember_setup_t{t}')} | {cell(r, 'scipy_setup')} | "
              f"{r.get('others_cores', 0):.2f} |")
    print()


def main():
    res = json.load(open(sys.argv[1]))
    for op in ("spmv", "spgemm"):
        table(res, op)


if __name__ == "__main__":
    main()
