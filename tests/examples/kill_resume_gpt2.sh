#!/usr/bin/env bash
# Crash safety of `gpt2 train`: a tiny run is killed with SIGKILL at random moments, and every
# checkpoint a killed run leaves behind must load and resume to exactly the model of an
# uninterrupted run with the same seed: model.safetensors bitwise, and training.json (the
# evaluation log) identical except for its wall-clock seconds. Bitwise because the run uses one
# thread, where the CPU kernels are deterministic, and a resume replays the batch stream from the
# seed.
#   kill_resume_gpt2.sh GPT2 [KILLS]
set -euo pipefail
. "$(dirname "$0")/kill_loop.sh"
name=kill_resume_gpt2
bin=$1
kills=${2:-20}
make_work_dir
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
run_ms=$(run_ms "$bin" "${args[@]}" --out "$work/timing")
without_seconds "$work/ref/training.json" > "$work/ref.log"

before_finish() { rm -f "$1/model.safetensors" "$1/training.json"; }  # only what the finishing run writes may be compared
check_run() {
  cmp -s "$work/ref/model.safetensors" "$2/model.safetensors" ||
    { echo "kill_resume_gpt2: run $1: the resumed model differs from the uninterrupted one" >&2; exit 1; }
  without_seconds "$2/training.json" | cmp -s "$work/ref.log" - ||
    { echo "kill_resume_gpt2: run $1: the resumed training log differs from the uninterrupted one:" >&2
      without_seconds "$2/training.json" | diff "$work/ref.log" - >&2 || true; exit 1; }
}
kill_resume_loop "$kills" "$run_ms" "$bin" "${args[@]}"
echo "kill_resume_gpt2: $kills runs of ${run_ms} ms, $killed killed mid-run, $resumed resumed from their checkpoint," \
     "$fresh restarted (killed before the first checkpoint); every final model is bitwise the uninterrupted one"
[ "$killed" -gt 0 ] || { echo "kill_resume_gpt2: no run was still going when killed; the test proved nothing" >&2; exit 1; }
[ "$resumed" -gt 0 ] || { echo "kill_resume_gpt2: no kill left a checkpoint to resume; the test proved nothing" >&2; exit 1; }
