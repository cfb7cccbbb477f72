#!/usr/bin/env bash
# Crash safety of training: train_classifier is killed with SIGKILL at random moments, and every
# checkpoint a killed run leaves behind must load and resume to exactly the model of an
# uninterrupted run with the same seed (bitwise: one thread, and the CPU kernels are deterministic
# for a fixed thread count).
#   kill_resume.sh TRAIN_CLASSIFIER [KILLS] [DATA_DIR]
set -euo pipefail
bin=$1
kills=${2:-20}
data=${3:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
  echo "kill_resume: no Fashion-MNIST under $data (Debian package dataset-fashion-mnist)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--data "$data" --limit 6000 --val-size 500 --epochs 4 --hidden 64 --threads 1 --seed 3 --warmup-steps 10)

"$bin" "${args[@]}" --out "$work/ref" > /dev/null 2>&1
start=$(date +%s%N)
"$bin" "${args[@]}" --out "$work/timing" > /dev/null 2>&1
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))

killed=0 resumed=0 fresh=0
for i in $(seq 1 "$kills"); do
  out="$work/run$i"
  "$bin" "${args[@]}" --out "$out" > /dev/null 2>&1 &
  pid=$!
  # A moment anywhere in the run, data loading and checkpoint writes included.
  sleep "$(awk -v r="$RANDOM" -v ms="$run_ms" 'BEGIN { printf "%.3f", (r / 32767.0) * ms / 1000.0 }')"
  if kill -9 "$pid" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "$pid" 2> /dev/null || true
  if [ -f "$out/checkpoint.safetensors" ]; then
    "$bin" "${args[@]}" --resume "$out/checkpoint.safetensors" --out "$out" > "$out.log" 2>&1 ||
      { echo "kill_resume: run $i: the checkpoint left by the kill did not resume:" >&2; cat "$out.log" >&2; exit 1; }
    resumed=$((resumed + 1))
  else
    "$bin" "${args[@]}" --out "$out" > /dev/null 2>&1
    fresh=$((fresh + 1))
  fi
  cmp -s "$work/ref/model.safetensors" "$out/model.safetensors" ||
    { echo "kill_resume: run $i: the resumed model differs from the uninterrupted one" >&2; exit 1; }
  if ls "$out"/*.tmp.* > /dev/null 2>&1; then
    echo "kill_resume: run $i: a temporary file outlived the resumed run: $(ls "$out"/*.tmp.*)" >&2
    exit 1
  fi
done
echo "kill_resume: $kills runs, $killed killed mid-run, $resumed resumed from their checkpoint, $fresh restarted" \
     "(killed before the first checkpoint); every final model is bitwise the uninterrupted one"
[ "$killed" -gt 0 ] || { echo "kill_resume: no run was still going when killed; the test proved nothing" >&2; exit 1; }
