#!/usr/bin/env bash
# One CNN training step (train_classifier --model cnn's network, batch 128, AdamW), Ember's
# bench_cnn_step against PyTorch's bench_cnn_torch.py, alternated REPEATS times at each thread count
# so that both see the same machine load; prints every JSON line, then the medians.
#
#   examples/classifier/bench_cnn_vs_torch.sh [REPEATS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
REPEATS=${1:-3}
STEPS=${2:-20}
BIN=${EMBER_BIN:-build/bin}/bench_cnn_step
PY=${PEER_PY:-$HOME/.cache/ember/peer-venv/bin/python}
[ -x "$BIN" ] || { echo "build first: cmake --build build --target bench_cnn_step" >&2; exit 1; }
[ -x "$PY" ] || { echo "no PyTorch peer at $PY (./run.sh bench-deps creates it)" >&2; exit 1; }
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
OUT=$(mktemp)
for r in $(seq 1 "$REPEATS"); do
  for t in 1 2; do
    OMP_NUM_THREADS=$t "$BIN" --threads "$t" --steps "$STEPS" | tee -a "$OUT"
    OMP_NUM_THREADS=$t "$PY" examples/classifier/bench_cnn_torch.py --threads "$t" --steps "$STEPS" | tee -a "$OUT"
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = sorted({(r["framework"], r["threads"]) for r in rows})
print(f"{'framework':24} {'threads':>7} {'forward':>9} {'backward':>9} {'optimizer':>9} {'step ms':>9}")
for fw, t in keys:
    sel = [r for r in rows if r["framework"] == fw and r["threads"] == t]
    med = {k: statistics.median(r[k] for r in sel) for k in ("forward_ms", "backward_ms", "optimizer_ms", "step_ms")}
    print(f"{fw:24} {t:>7} {med['forward_ms']:9.1f} {med['backward_ms']:9.1f} {med['optimizer_ms']:9.2f} {med['step_ms']:9.1f}")
PY
rm -f "$OUT"
