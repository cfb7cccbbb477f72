#!/usr/bin/env bash
# Crash safety of training: train_classifier is killed with SIGKILL at random moments, and every
# checkpoint a killed run leaves behind must load and resume to exactly the model of an
# uninterrupted run with the same seed (bitwise: one thread, and the CPU kernels are deterministic
# for a fixed thread count).
#   kill_resume.sh TRAIN_CLASSIFIER [KILLS] [DATA_DIR]
set -euo pipefail
. "$(dirname "$0")/kill_loop.sh"
name=kill_resume
bin=$1
kills=${2:-20}
data=${3:-/usr/share/datasets/fashion-mnist}
require_fashion_mnist "$data"
make_work_dir
args=(--data "$data" --limit 6000 --val-size 500 --epochs 4 --hidden 64 --threads 1 --seed 3 --warmup-steps 10)

"$bin" "${args[@]}" --out "$work/ref" > /dev/null 2>&1
run_ms=$(run_ms "$bin" "${args[@]}" --out "$work/timing")

check_run() {
  cmp -s "$work/ref/model.safetensors" "$2/model.safetensors" ||
    { echo "kill_resume: run $1: the resumed model differs from the uninterrupted one" >&2; exit 1; }
}
kill_resume_loop "$kills" "$run_ms" "$bin" "${args[@]}"
echo "kill_resume: $kills runs, $killed killed mid-run, $resumed resumed from their checkpoint, $fresh restarted" \
     "(killed before the first checkpoint); every final model is bitwise the uninterrupted one"
[ "$killed" -gt 0 ] || { echo "kill_resume: no run was still going when killed; the test proved nothing" >&2; exit 1; }
