#!/usr/bin/env bash
# Two ranks started with different settings: every rank must stop at start-up with an error that
# names the first differing flag and both ranks' values (framework/train/dist/settings_check.h),
# before it reads any data (the --data path does not exist) and before any other collective.
#   dist_settings_mismatch.sh MPIEXEC PROGRAM CASE
#   CASE: steps | batch_size | seed (train_classifier), gpt2_seed (PROGRAM is gpt2), same (no mismatch)
set -euo pipefail
name=dist_settings_mismatch
mpiexec=$1 bin=$2 case=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--distributed --data /nonexistent/ember-data --threads 1 --no-progress --out "$work/out")
case $case in
  steps)      a=(--epochs 2) b=(--epochs 3) want="--epochs is 2 on rank 0 but 3 on rank 1" ;;
  batch_size) a=(--batch-size 64) b=(--batch-size 128) want="--batch-size is 64 on rank 0 but 128 on rank 1" ;;
  seed)       a=(--seed 1) b=(--seed 2) want="--seed is 1 on rank 0 but 2 on rank 1" ;;
  gpt2_seed)  common=(train --distributed --data /nonexistent/ember-data --out "$work/out")
              a=(--seed 1) b=(--seed 2) want="--seed is 1 on rank 0 but 2 on rank 1" ;;
  same)       a=(--seed 1) b=(--seed 1) want="" ;;
  *) echo "$name: unknown case '$case'" >&2; exit 1 ;;
esac
status=0
timeout 120 "$mpiexec" -n 1 "$bin" "${common[@]}" "${a[@]}" : -n 1 "$bin" "${common[@]}" "${b[@]}" \
  > "$work/log" 2>&1 || status=$?
if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
  echo "$name ($case): expected a clean failure, got exit status $status:" >&2; cat "$work/log" >&2; exit 1
fi
if grep -q -i "segmentation\|signal 11\|core dumped" "$work/log"; then
  echo "$name ($case): a rank crashed:" >&2; cat "$work/log" >&2; exit 1
fi
if [ -z "$want" ]; then
  # The same settings pass the check and fail later, on the missing data.
  if grep -q "different settings" "$work/log" || ! grep -q "nonexistent" "$work/log"; then
    echo "$name ($case): equal settings were not accepted:" >&2; cat "$work/log" >&2; exit 1
  fi
elif ! grep -q -F -- "the ranks were started with different settings: $want" "$work/log"; then
  echo "$name ($case): no error naming '$want':" >&2; cat "$work/log" >&2; exit 1
fi
echo "$name ($case): PASS"
