#!/usr/bin/env bash
# scale_dist.sh [EPOCHS] [ROUNDS]: the data-parallel scaling table of README.md ("Data-parallel
# training"): the default MLP trained for EPOCHS epochs as 1 rank x 2 OpenMP threads and as 2 MPI
# ranks x 1 thread, the two alternated ROUNDS times (this VM's timings drift); prints one markdown
# row per run with the epoch time and, for 2 ranks, rank 0's gradient-averaging time per step.
set -euo pipefail
cd "$(dirname "$0")/../.."
EPOCHS=${1:-1}
ROUNDS=${2:-3}
BIN=${BIN:-build/bin/train_classifier}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
common=(--epochs "$EPOCHS" --no-progress --val-size 5000)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo
echo "| run | layout | epoch s (mean) | steps/epoch | sync ms/step | sync share | waiting ms/step |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  "$BIN" "${common[@]}" --threads 2 --out "$OUT/one" --json "$OUT/one.json" >"$OUT/one.log"
  python3 - "$OUT/one.json" "$round" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); e = d["epochs"]
print(f"| {sys.argv[2]} | 1 rank x 2 threads | {sum(r['epoch_seconds'] for r in e)/len(e):.2f} | {e[-1]['step']//len(e)} | - | - | - |")
PY
  mpirun -np 2 "$BIN" "${common[@]}" --threads 1 --distributed --out "$OUT/two" --json "$OUT/two.json" >"$OUT/two.log"
  python3 - "$OUT/two.json" "$OUT/two.log" "$round" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); e = d["epochs"]; steps = e[-1]["step"] // len(e)
secs = sum(r["epoch_seconds"] for r in e) / len(e)
sync = sum(r["gradient_sync_seconds"] for r in e) / len(e)
wait = [float(m) for m in re.findall(r"([0-9.]+) ms waiting", open(sys.argv[2]).read())]
print(f"| {sys.argv[3]} | 2 ranks x 1 thread | {secs:.2f} | {steps} | {1e3*sync/steps:.3f} | {100*sync/secs:.1f}% | {sum(wait)/len(wait):.3f} |")
PY
done
