#!/usr/bin/env bash
# Crash safety of `gpt2 train`: a tiny run is killed with SIGKILL at random moments, and every
# checkpoint a killed run leaves behind must load and resume to exactly the model of an
# uninterrupted run with the same seed: model.safetensors bitwise, and training.json (the
# evaluation log) identical except for its wall-clock seconds. Bitwise because the run uses one
# thread, where the CPU kernels are deterministic, and a resume replays the batch stream from the
# seed.
#   kill_resume_gpt2.sh GPT2 [KILLS]
set -euo pipefail
bin=$1
kills=${2:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive

# A corpus of made-up sentences (deterministic: awk's srand with a fixed seed), 20 KB.
mkdir "$work/text"
awk 'BEGIN { srand(7); n = split("the a cat dog sat on mat ran far near big small red blue and then it was", w, " ");
             for (l = 0; l < 600; l++) { s = ""; k = 5 + int(rand() * 8);
               for (i = 0; i < k; i++) s = s w[1 + int(rand() * n)] " "; print s "." } }' > "$work/text/corpus.txt"
# 200 steps, a checkpoint after every 10th (each evaluation).
args=(train --data "$work/text" --steps 200 --batch 8 --context 64 --layers 2 --heads 2 --embd 32 --eval-every 10
      --eval-batches 2 --sample-tokens 20 --seed 3)
without_seconds() { grep -v '"seconds"' "$1"; }

"$bin" "${args[@]}" --out "$work/ref" > /dev/null 2>&1
start=$(date +%s%N)
"$bin" "${args[@]}" --out "$work/timing" > /dev/null 2>&1
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
without_seconds "$work/ref/training.json" > "$work/ref.log"

killed=0 resumed=0 fresh=0
for i in $(seq 1 "$kills"); do
  out="$work/run$i"
  "$bin" "${args[@]}" --out "$out" > /dev/null 2>&1 &
  pid=$!
  # A moment anywhere in the run, start-up, evaluations and checkpoint writes included.
  sleep "$(awk -v r="$RANDOM" -v ms="$run_ms" 'BEGIN { printf "%.3f", (r / 32767.0) * ms / 1000.0 }')"
  if kill -9 "$pid" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "$pid" 2> /dev/null || true
  rm -f "$out/model.safetensors" "$out/training.json"  # only what the resumed run writes may be compared
  if [ -f "$out/checkpoint.safetensors" ]; then
    "$bin" "${args[@]}" --resume "$out/checkpoint.safetensors" --out "$out" > "$out.log" 2>&1 ||
      { echo "kill_resume_gpt2: run $i: the checkpoint left by the kill did not resume:" >&2; cat "$out.log" >&2; exit 1; }
    resumed=$((resumed + 1))
  else
    "$bin" "${args[@]}" --out "$out" > /dev/null 2>&1
    fresh=$((fresh + 1))
  fi
  cmp -s "$work/ref/model.safetensors" "$out/model.safetensors" ||
    { echo "kill_resume_gpt2: run $i: the resumed model differs from the uninterrupted one" >&2; exit 1; }
  without_seconds "$out/training.json" | cmp -s "$work/ref.log" - ||
    { echo "kill_resume_gpt2: run $i: the resumed training log differs from the uninterrupted one:" >&2
      without_seconds "$out/training.json" | diff "$work/ref.log" - >&2 || true; exit 1; }
  if ls "$out"/*.tmp.* > /dev/null 2>&1; then
    echo "kill_resume_gpt2: run $i: a temporary file outlived the resumed run: $(ls "$out"/*.tmp.*)" >&2
    exit 1
  fi
done
echo "kill_resume_gpt2: $kills runs of ${run_ms} ms, $killed killed mid-run, $resumed resumed from their checkpoint," \
     "$fresh restarted (killed before the first checkpoint); every final model is bitwise the uninterrupted one"
[ "$killed" -gt 0 ] || { echo "kill_resume_gpt2: no run was still going when killed; the test proved nothing" >&2; exit 1; }
[ "$resumed" -gt 0 ] || { echo "kill_resume_gpt2: no kill left a checkpoint to resume; the test proved nothing" >&2; exit 1; }
