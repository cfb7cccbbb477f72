#!/usr/bin/env bash
# build_pdf.sh [OUTDIR]: typesets autodiff.tex into OUTDIR/autodiff.pdf (default build/autodiff-pdf/
# at the repository root, ignored by git). Installs Debian's LaTeX (latexmk, texlive-latex-base,
# texlive-latex-extra, texlive-pictures) with apt-get when pdflatex or latexmk is missing; ./run.sh
# does not. The tables it \inputs come from generated/ (regenerate.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
outdir=${1:-$root/build/autodiff-pdf}
if ! command -v pdflatex >/dev/null || ! command -v latexmk >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    latexmk texlive-latex-base texlive-latex-extra texlive-pictures
fi
mkdir -p "$outdir"
cd "$here"
latexmk -pdf -interaction=nonstopmode -halt-on-error -outdir="$outdir" autodiff.tex
echo "wrote $outdir/autodiff.pdf"
