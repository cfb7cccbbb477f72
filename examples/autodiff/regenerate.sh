#!/usr/bin/env bash
# Regenerates every table this study shows from the programs that compute them:
#   generated/{primal,tangent,adjoint}.tex   autodiff_trace --latex (read by autodiff.tex)
#   generated/{primal,tangent,adjoint}.txt, traces.txt, traces_latex.txt, hips_autograd_trace.txt
# and pastes the text versions into README.md and APPENDIX.md between their "generated:" markers.
# Usage: examples/autodiff/regenerate.sh [BUILD_DIR]   (default: build; the programs must be built)
# The HIPS Autograd trace needs the 'autograd' package: set HIPS_PYTHON to a Python that has it
# (default /tmp/hips-venv/bin/python, see trace_hips_autograd.py); it is skipped when absent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
trace="$build/bin/autodiff_trace"
[ -x "$trace" ] || { echo "regenerate.sh: $trace not found; build it first (cmake --build $build --target autodiff_trace)" >&2; exit 1; }
out="$here/generated"
mkdir -p "$out"
for t in primal tangent adjoint; do
  "$trace" --latex --table "$t" > "$out/$t.tex"
  "$trace" --table "$t" > "$out/$t.txt"
done
"$trace" > "$out/traces.txt"
"$trace" --latex > "$out/traces_latex.txt"
hips=${HIPS_PYTHON:-/tmp/hips-venv/bin/python}
if [ -x "$hips" ] && "$hips" -c "import autograd" 2>/dev/null; then
  "$hips" "$here/trace_hips_autograd.py" > "$out/hips_autograd_trace.txt"
else
  echo "regenerate.sh: no Python with 'autograd' at $hips; keeping generated/hips_autograd_trace.txt as it is" >&2
fi
/usr/bin/python3 - "$out" "$here/README.md" "$here/APPENDIX.md" <<'PY'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
def fill(m):
    name = m.group(1)
    body = (out / name).read_text().rstrip("\n")
    return f"<!-- generated:{name} -->\n```text\n{body}\n```\n<!-- end generated -->"
for doc in map(pathlib.Path, sys.argv[2:]):
    text = re.sub(r"<!-- generated:([\w.]+) -->.*?<!-- end generated -->", fill, doc.read_text(), flags=re.S)
    doc.write_text(text)
PY
echo "regenerated $out and the tables in README.md and APPENDIX.md"
