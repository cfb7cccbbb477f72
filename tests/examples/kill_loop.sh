# The crash-safety apparatus shared by kill_resume.sh, kill_resume_gpt2.sh and dist_resume.sh;
# source it (it defines functions and sets nothing else):
#   . "$(dirname "$0")/kill_loop.sh"
# `name` (set by the caller) prefixes every message.

# Exits 2 (CTest's skip code) when Fashion-MNIST is not under $1.
require_fashion_mnist() {
  if [ ! -f "$1/train-images-idx3-ubyte.gz" ]; then
    echo "$name: no Fashion-MNIST under $1 (Debian package dataset-fashion-mnist)" >&2
    exit 2
  fi
}

# Sets `work` to a fresh temporary folder that is removed when the script exits.
make_work_dir() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# Runs the command quietly and prints how many milliseconds it took.
run_ms() {
  local start
  start=$(date +%s%N)
  "$@" > /dev/null 2>&1 || return 1
  echo $(( ($(date +%s%N) - start) / 1000000 ))
}

# Fails naming `what` when any of the folders holds a "*.tmp.*" file: the atomic writers'
# temporaries must never outlive a run.
no_temp_files() {
  local what=$1 dir
  shift
  for dir in "$@"; do
    if ls "$dir"/*.tmp.* > /dev/null 2>&1; then
      echo "$name: $what: a temporary file outlived the run: $(ls "$dir"/*.tmp.*)" >&2
      exit 1
    fi
  done
}

# kill_resume_loop KILLS RUN_MS CMD...: KILLS times, starts `CMD --out $work/runI`, kills it with
# SIGKILL at a random moment within RUN_MS (start-up, evaluations and checkpoint writes
# included), then finishes the run: resumed from the checkpoint the kill left, or from scratch
# when it left none. Then calls the caller's `check_run I OUT` (compare OUT with the
# uninterrupted run) and checks that no temporary file is left. A caller may define
# `before_finish OUT`, called after the kill (e.g. to remove files only the finishing run
# may write). Sets `killed`, `resumed` and `fresh`.
kill_resume_loop() {
  local kills=$1 ms=$2 i out pid
  shift 2
  killed=0 resumed=0 fresh=0
  for i in $(seq 1 "$kills"); do
    out="$work/run$i"
    "$@" --out "$out" > /dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v r="$RANDOM" -v ms="$ms" 'BEGIN { printf "%.3f", (r / 32767.0) * ms / 1000.0 }')"
    if kill -9 "$pid" 2> /dev/null; then killed=$((killed + 1)); fi
    wait "$pid" 2> /dev/null || true
    if declare -F before_finish > /dev/null; then before_finish "$out"; fi
    if [ -f "$out/checkpoint.safetensors" ]; then
      "$@" --resume "$out/checkpoint.safetensors" --out "$out" > "$out.log" 2>&1 ||
        { echo "$name: run $i: the checkpoint left by the kill did not resume:" >&2; cat "$out.log" >&2; exit 1; }
      resumed=$((resumed + 1))
    else
      "$@" --out "$out" > /dev/null 2>&1
      fresh=$((fresh + 1))
    fi
    check_run "$i" "$out"
    no_temp_files "run $i" "$out"
  done
}
