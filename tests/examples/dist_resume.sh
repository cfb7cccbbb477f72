#!/usr/bin/env bash
# Data-parallel train_classifier: rank 0 alone writes the checkpoint, and it resumes on the same
# world size to exactly the uninterrupted run's model (bitwise), and on another world size (one
# process) to a model as good (not bitwise: a batch's gradient is summed in another order).
#   dist_resume.sh MPIEXEC TRAIN_CLASSIFIER [DATA_DIR]
set -euo pipefail
. "$(dirname "$0")/kill_loop.sh"
name=dist_resume
mpiexec=$1 bin=$2
data=${3:-/usr/share/datasets/fashion-mnist}
require_fashion_mnist "$data"
make_work_dir
args=(--data "$data" --limit 3000 --val-size 500 --epochs 2 --hidden 64 --threads 1 --seed 5 --warmup-steps 10 --no-progress)
two() { timeout 120 "$mpiexec" -n 2 "$bin" --distributed "${args[@]}" "$@"; }

# A global batch that does not split evenly is refused on every rank, naming the flag.
if two --out "$work/bad" --batch-size 129 > "$work/bad.log" 2>&1 || ! grep -q -- "--batch-size 129 is not a multiple" "$work/bad.log"; then
  echo "dist_resume: --batch-size 129 on 2 ranks was not refused clearly:" >&2; cat "$work/bad.log" >&2; exit 1
fi
two --out "$work/ref" > "$work/ref.log" 2>&1 || { cat "$work/ref.log"; exit 1; }
two --out "$work/split" --stop-after 1 > /dev/null 2>&1
two --out "$work/split" --resume "$work/split/checkpoint.safetensors" > "$work/split.log" 2>&1 ||
  { cat "$work/split.log"; exit 1; }
cmp "$work/ref/model.safetensors" "$work/split/model.safetensors" ||
  { echo "dist_resume: 2 ranks resumed on 2 ranks ended elsewhere than the uninterrupted run" >&2; exit 1; }
two --out "$work/split2" --stop-after 1 > /dev/null 2>&1
"$bin" "${args[@]}" --out "$work/one" --resume "$work/split2/checkpoint.safetensors" > "$work/one.log" 2>&1 ||
  { echo "dist_resume: a 2-rank checkpoint did not resume on 1 process:" >&2; cat "$work/one.log" >&2; exit 1; }
no_temp_files "resumed runs" "$work"/*/
python3 - "$work/ref/metrics.json" "$work/one/metrics.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["config"]["world_size"] == 2 and b["config"]["world_size"] == 1, "world sizes not recorded"
ta, tb = a["test"]["accuracy"], b["test"]["accuracy"]
print(f"test accuracy: 2 ranks {ta:.4f}, resumed on 1 process {tb:.4f}")
assert abs(ta - tb) < 0.01, "the run resumed on another world size diverged"
PY
echo "dist_resume: PASS"
