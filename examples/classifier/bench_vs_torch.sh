#!/usr/bin/env bash
# Seconds per training epoch of train_classifier against PyTorch eager (bench_torch.py): the same
# MLP, batch size, optimizer and schedule, measured in one run, interleaved so that both see the
# same machine load. The first epoch of every run is a warm-up and is not counted; the table shows
# the median of the remaining epochs over all repeats.
#
#   examples/classifier/bench_vs_torch.sh [OUTDIR] [EPOCHS] [REPEATS]
#
# Fairness: PyTorch runs with the OPENBLAS_CORETYPE that examples/common/openblas_core.h chooses
# (build/bin/openblas_env; OPENBLAS_L2_SIZE unset), in the peer venv's python when present; single-threaded and in two thread layouts that keep
# torch's pool plus OpenBLAS's pool within 2 cores; Ember runs with 1 and 2 OpenMP threads. Every command gets the
# same OMP_WAIT_POLICY (passive unless set: on a shared machine, spinning OpenMP threads stall).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-results/classifier/bench}
EPOCHS=${2:-3}
REPEATS=${3:-3}
MODEL=${MODEL:-mlp}  # MODEL=cnn times train_classifier --model cnn against the same CNN in PyTorch
LAYOUTS=${LAYOUTS:-"1 1,1 2,2 1"}  # torch threads + OpenBLAS threads per peer run, comma-separated
BIN=${EMBER_BIN:-build/bin}/train_classifier  # EMBER_BIN=DIR picks another build
ENV_TOOL=${EMBER_BIN:-build/bin}/openblas_env
[ -x "$ENV_TOOL" ] || { echo "build first: cmake --build build --target openblas_env" >&2; exit 1; }
PY=$("$ENV_TOOL" --which-python)
# EMBER_KEEP_WAIT_POLICY=1 (scripts/bench_summary.sh on a quiet machine) keeps OpenMP's default.
[ -n "${EMBER_KEEP_WAIT_POLICY:-}" ] || export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
[ -x "$BIN" ] || { echo "build first: cmake --build build --target train_classifier" >&2; exit 1; }
mkdir -p "$OUT"
"$ENV_TOOL" --python "$PY" --json > "$OUT/peer.json"  # prints the peer (torch, OpenBLAS core) on stderr
PEER_ENV=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["openblas"]["env"])' "$OUT/peer.json")
for r in $(seq 1 "$REPEATS"); do
  for t in 1 2; do
    echo "== repeat $r: ember, $t thread(s)" >&2
    OMP_NUM_THREADS=$t "$BIN" --model "$MODEL" --epochs "$EPOCHS" --threads "$t" --no-progress --out "$OUT/ember_t$t" \
      --json "$OUT/ember_t${t}_r$r.json" >/dev/null
  done
  IFS=, read -ra layouts <<<"$LAYOUTS"
  for layout in "${layouts[@]}"; do
    set -- $layout
    echo "== repeat $r: torch, torch threads $1, OpenBLAS threads $2" >&2
    $PEER_ENV OMP_NUM_THREADS="$1" OPENBLAS_NUM_THREADS="$2" \
      "$PY" examples/classifier/bench_torch.py --model "$MODEL" --epochs "$EPOCHS" --threads "$1" --json "$OUT/torch_t$1_b$2_r$r.json" >/dev/null
  done
done
"$PY" - "$OUT" <<'PY'
import glob, json, os, platform, re, statistics, sys
out = sys.argv[1]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
rows, blas = {}, set()
for path in sorted(glob.glob(os.path.join(out, "*_r*.json"))):
    name = re.sub(r"_r\d+\.json$", "", os.path.basename(path))
    doc = json.load(open(path))
    rows.setdefault(name, []).extend(e["epoch_seconds"] for e in doc["epochs"][1:])
    if doc.get("openblas"):
        blas.add(doc["openblas"])
labels = {"ember_t1": "Ember, 1 OpenMP thread", "ember_t2": "Ember, 2 OpenMP threads",
          "torch_t1_b1": "PyTorch eager, 1 torch + 1 OpenBLAS thread",
          "torch_t1_b2": "PyTorch eager, 1 torch + 2 OpenBLAS threads", "torch_t2_b1": "PyTorch eager, 2 torch + 1 OpenBLAS thread"}
med = {k: statistics.median(v) for k, v in rows.items() if v}
best_torch = min(v for k, v in med.items() if k.startswith("torch"))
print(f"CPU: {cpu}, {os.cpu_count()} cores; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
print("PyTorch's OpenBLAS: " + ("; ".join(sorted(blas)) or "unknown"))
peer = json.load(open(os.path.join(out, "peer.json")))
print("peer: " + peer["info"].get("summary", peer["python"]) + "; OpenBLAS core " + peer["openblas"]["core"])
print(f"{'configuration':46s} {'s/epoch':>8s} {'epochs':>6s} {'vs best torch':>13s}")
table = []
for k in sorted(med):
    print(f"{labels.get(k, k):46s} {med[k]:8.3f} {len(rows[k]):6d} {best_torch / med[k]:12.2f}x")
    table.append({"config": k, "label": labels.get(k, k), "median_epoch_seconds": med[k], "epochs_timed": len(rows[k]),
                  "speedup_vs_best_torch": best_torch / med[k]})
json.dump({"cpu": cpu, "openblas": sorted(blas), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "peer": peer, "rows": table},
          open(os.path.join(out, "bench_vs_torch.json"), "w"), indent=2)
PY
