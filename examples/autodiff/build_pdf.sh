#!/usr/bin/env bash
# Builds autodiff.tex to autodiff.pdf with latexmk (Debian: latexmk texlive-latex-extra
# texlive-pictures). The PDF and LaTeX's auxiliary files go to OUTDIR (default
# examples/autodiff/pdf/, ignored by git). The tables it includes come from regenerate.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
outdir=${1:-$here/pdf}
if ! command -v latexmk >/dev/null; then
  echo "build_pdf.sh: latexmk is not installed (apt-get install latexmk texlive-latex-extra texlive-pictures)" >&2
  exit 2
fi
cd "$here"
latexmk -pdf -interaction=nonstopmode -halt-on-error -outdir="$outdir" autodiff.tex
echo "wrote $outdir/autodiff.pdf"
