#!/usr/bin/env python3
"""What cuBLAS ships for float32 GEMM on one GPU architecture, read from its binaries without a GPU:
runs `cuobjdump -res-usage -arch ARCH` on libcublas and libcublasLt, keeps the kernels that multiply
float32 matrices (FFMA on the CUDA cores, or TF32 on the tensor cores), and groups them by family,
math, block tile (M x N x K of C computed per thread block), pipeline stages and warp layout, with
the registers per thread and the shared memory per block that the compiler gave them.

    python3 examples/matmul/list_cublas_kernels.py --arch sm_90 --out examples/matmul/data/cublas_sgemm_kernels_sm_90.md

cuobjdump comes with a CUDA toolkit; where the toolkit has none (nvcc-only installs), the copy in
PyTorch's bundled Triton is found too. Only names and resource counts are read; which kernel runs
for a given shape is decided at run time by cuBLAS's heuristics (see GPU.md: CUBLASLT_LOG_LEVEL).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict


def find_cuobjdump(explicit):
    if explicit:
        return explicit
    for c in [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump",
              *glob.glob(os.path.expanduser("~/.cache/ember/peer-venv/lib/python3*/site-packages/triton/backends/"
                                            "nvidia/bin/cuobjdump"))]:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("list_cublas_kernels: no cuobjdump found (CUDA toolkit, or torch's Triton in the peer venv); "
             "pass --cuobjdump PATH")


def read_kernels(cuobjdump, lib, arch):
    """(name, registers, shared bytes) of every kernel of `lib` compiled for `arch`."""
    out = subprocess.run([cuobjdump, "-res-usage", "-arch", arch, lib], capture_output=True, text=True)
    if out.returncode != 0 and not out.stdout:
        sys.exit(f"list_cublas_kernels: cuobjdump failed on {lib}: {out.stderr.strip()[:300]}")
    kernels, name = [], None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+).*SHARED:(\d+)", line)
        if m and name:
            kernels.append((name, int(m.group(1)), int(m.group(2))))
            name = None
    return kernels


def demangle(names):
    """Names as C++ writes them, through binutils' c++filt where it exists (else unchanged)."""
    tool = shutil.which("c++filt")
    if not tool or not names:
        return list(names)
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return out if len(out) == len(names) else list(names)


def describe(name):
    """(family, math, tile, stages, warps) of a float32 GEMM kernel (name demangled), or None."""
    m = re.match(r"(sm\d+)_xmma_gemm_f32f32_(f32f32|tf32f32)_f32_(\w\w)_n_tilesize(\d+x\d+x\d+)"
                 r"(?:_stage(\d+))?_(?:warpsize|warpgroupsize)(\d+x\d+x\d+)", name)
    if m:
        math = "FFMA (CUDA cores)" if m.group(2) == "f32f32" else "TF32 (tensor cores)"
        return f"{m.group(1)}_xmma_gemm ({m.group(3)})", math, m.group(4), m.group(5) or "-", m.group(6)
    m = re.search(r"(cutlass_(\d+)_(simt|tensorop)_(s\w*?gemm)(?:_(\w+?))?_(\d+)x(\d+)_(\d+)x(\d+))", name)
    if m and (m.group(3) == "simt" or "tf32" in m.group(4)):
        math = "FFMA (CUDA cores)" if m.group(3) == "simt" else "TF32 (tensor cores)"
        family = f"cutlass_{m.group(2)}_{m.group(3)}_{m.group(4)}" + (f" ({m.group(5)})" if m.group(5) else "")
        return family, math, f"{m.group(6)}x{m.group(7)}x{m.group(8)}", m.group(9), "-"
    if "sgemm" in name.split("<")[0].split("(")[0]:
        family = re.split(r"[<(]", name, 1)[0].replace("void ", "").strip()
        return family, "FFMA (CUDA cores)", "-", "-", "-"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="sm_90", help="GPU architecture of the cubins to read (H100/H200: sm_90)")
    p.add_argument("--cuda-lib", default="/usr/local/cuda/lib64", help="folder holding libcublas.so*")
    p.add_argument("--cuobjdump", default="", help="path of cuobjdump (default: searched)")
    p.add_argument("--out", default="", help="write the Markdown here (default: stdout)")
    a = p.parse_args()
    tool = find_cuobjdump(a.cuobjdump)
    libs = [l for l in (sorted(glob.glob(os.path.join(a.cuda_lib, "libcublas.so.*")))[:1] +
                        sorted(glob.glob(os.path.join(a.cuda_lib, "libcublasLt.so.*")))[:1])]
    if not libs:
        sys.exit(f"list_cublas_kernels: no libcublas in {a.cuda_lib}")
    groups = defaultdict(lambda: {"n": 0, "reg": [], "shared": []})
    total = 0
    for lib in libs:
        kernels = read_kernels(tool, lib, a.arch)
        for (_, reg, shared), name in zip(kernels, demangle([k[0] for k in kernels])):
            total += 1
            d = describe(name)
            if d is None:
                continue
            g = groups[(os.path.basename(lib),) + d]
            g["n"] += 1
            g["reg"].append(reg)
            g["shared"].append(shared)
    rng = lambda v: f"{min(v)}" if min(v) == max(v) else f"{min(v)}-{max(v)}"
    lines = [f"# cuBLAS float32 GEMM kernels for {a.arch}", "",
             f"Read by `python3 examples/matmul/list_cublas_kernels.py --arch {a.arch}` with `{tool}` from "
             + ", ".join(f"`{l}`" for l in libs) + f": {total} kernels in all, "
             f"{sum(g['n'] for g in groups.values())} of them float32 GEMMs. Tile = the M x N x K block of C "
             "one thread block computes per step; warps = the warp (or Hopper warp-group) layout over it; "
             "registers per thread and static shared memory per block as compiled (the xmma kernels size "
             "their pipeline buffers in dynamic shared memory at launch, which cuobjdump cannot see).", "",
             "| library | kernel family (layouts) | math | tile | stages | warps | kernels | registers | shared bytes |",
             "|---|---|---|---|---|---|---:|---|---|"]
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], [int(x) for x in re.findall(r"\d+", k[3])])):
        g = groups[key]
        lines.append("| " + " | ".join(key) + f" | {g['n']} | {rng(g['reg'])} | {rng(g['shared'])} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
        print(f"wrote {a.out} ({len(groups)} groups)")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
