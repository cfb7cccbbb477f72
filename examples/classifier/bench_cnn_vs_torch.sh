#!/usr/bin/env bash
# One CNN training step (train_classifier --model cnn's network, batch 128, AdamW), Ember's
# bench_cnn_step against PyTorch's bench_cnn_torch.py, alternated REPEATS times at each thread count
# so that both see the same machine load; prints every JSON line, then the medians: of the step,
# and of each convolution alone (forward, input and weight gradients, in GFLOP/s, beside Ember's
# matmul on the im2col product of the same size).
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
[ -n "${EMBER_KEEP_WAIT_POLICY:-}" ] || export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}  # as bench_vs_torch.sh
OUT=$(mktemp)
for r in $(seq 1 "$REPEATS"); do
  for t in 1 2; do
    OMP_NUM_THREADS=$t "$BIN" --threads "$t" --steps "$STEPS" --convs | tee -a "$OUT"
    OMP_NUM_THREADS=$t "$PY" examples/classifier/bench_cnn_torch.py --threads "$t" --steps "$STEPS" --convs | tee -a "$OUT"
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in lines if "layer" not in r]
convs = [r for r in lines if "layer" in r]
keys = sorted({(r["framework"], r["threads"]) for r in rows})
print(f"{'framework':24} {'threads':>7} {'forward':>9} {'backward':>9} {'optimizer':>9} {'step ms':>9}")
for fw, t in keys:
    sel = [r for r in rows if r["framework"] == fw and r["threads"] == t]
    med = {k: statistics.median(r[k] for r in sel) for k in ("forward_ms", "backward_ms", "optimizer_ms", "step_ms")}
    print(f"{fw:24} {t:>7} {med['forward_ms']:9.1f} {med['backward_ms']:9.1f} {med['optimizer_ms']:9.2f} {med['step_ms']:9.1f}")
print(f"\n{'GFLOP/s':24} {'threads':>7} {'layer':>6} {'forward':>9} {'input gr':>9} {'weight gr':>9} {'im2col mm':>9}")
for fw, t, layer in sorted({(r["framework"], r["threads"], r["layer"]) for r in convs}):
    sel = [r for r in convs if (r["framework"], r["threads"], r["layer"]) == (fw, t, layer)]
    med = {k: statistics.median(r[k] for r in sel) if k in sel[0] else float("nan")
           for k in ("forward_gflops", "input_grad_gflops", "weight_grad_gflops", "im2col_matmul_gflops")}
    print(f"{fw:24} {t:>7} {layer:>6} {med['forward_gflops']:9.1f} {med['input_grad_gflops']:9.1f} "
          f"{med['weight_grad_gflops']:9.1f} {med['im2col_matmul_gflops']:9.1f}")
PY
rm -f "$OUT"
