#!/usr/bin/env bash
# Runs `gpt2 bench` and its PyTorch eager peer (nanoGPT's model, bench_torch.py) on the same shapes
# in one command and prints the tokens/s ratio per row, then plots time against length into
# OUTDIR/bench.png and the latency of each step against its position into OUTDIR/per_step.png.
# Usage: examples/gpt2/bench_vs_torch.sh [OUTDIR] [extra bench flags...]
# (EMBER_BIN=DIR picks another build's bin folder.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/results/gpt2-bench}
shift || true
mkdir -p "$out"
bin=${EMBER_BIN:-$root/build/bin}
"$bin/gpt2" bench --json "$out/ember.json" "$@"
echo
# The peer: the bench-deps venv's python when present, with openblas_core.h's OPENBLAS_CORETYPE.
PY=$("$bin/openblas_env" --which-python)
"$bin/openblas_env" --python "$PY" --json > "$out/peer.json"
PEER_ENV=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["openblas"]["env"])' "$out/peer.json")
$PEER_ENV "$PY" "$here/bench_torch.py" --json "$out/torch.json" "$@"
echo
/usr/bin/python3 - "$out/ember.json" "$out/torch.json" <<'PY'
import json, sys
e, t = (json.load(open(p)) for p in sys.argv[1:3])
print(f"prefill: Ember {e['prefill_s']:.3f} s, PyTorch {t['prefill_s']:.3f} s, speed ratio {t['prefill_s'] / e['prefill_s']:.2f}x")
print(f"{'generated':>10}{'cache':>8}{'Ember tok/s':>14}{'torch tok/s':>14}{'Ember/torch':>13}")
for a, b in zip(e["rows"], t["rows"]):
    print(f"{a['generated']:>10}{'yes' if a['cache'] else 'no':>8}{a['tokens_per_s']:>14.2f}{b['tokens_per_s']:>14.2f}"
          f"{a['tokens_per_s'] / b['tokens_per_s']:>13.2f}")
PY
/usr/bin/python3 "$here/plot_bench.py" "$out" --out "$out/bench.png"
/usr/bin/python3 "$here/plot_bench.py" "$out" --per-step --out "$out/per_step.png"
