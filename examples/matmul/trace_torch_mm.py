#!/usr/bin/python3
"""How PyTorch calls cuBLAS, traced: torch.profiler records the operators (aten::mm and what it
calls) and the GPU kernels of one torch.mm per case, and the environment's CUBLASLT_LOG_LEVEL=2 /
CUBLASLT_LOG_FILE (set by scripts/gpu_check.sh) logs the cuBLASLt calls beside it. The JSON names
the exact PyTorch build (version and git commit), so that the source reading in
examples/matmul/GPU.md can be pinned to that commit.

    CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE=OUT/torch_mm_cublaslt.log python3 examples/matmul/trace_torch_mm.py --json OUT/torch_mm_trace.json

--device cpu runs the same code on the CPU at 1/64 of the sizes (operators only, no kernels): the
format test tests/examples/matmul/trace_torch_mm_test.py uses it where there is no GPU.
"""
import argparse
import json
import os
import sys


def trace_case(torch, m, k, n, dtype, tf32, device):
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cuda.matmul.allow_tf32 = tf32
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    g = torch.Generator(device=device).manual_seed(1)
    a = torch.randn(m, k, device=device, dtype=dtype, generator=g)
    b = torch.randn(k, n, device=device, dtype=dtype, generator=g)
    for _ in range(2):  # handle, workspace and heuristics are set up outside the traced call
        torch.mm(a, b)
    sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        c = torch.mm(a, b)
        sync()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    ops = [e.name for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    kernels = [e.name for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    ref = (a.double() @ b.double())
    err = float((c.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
    return {"m": m, "k": k, "n": n, "dtype": str(dtype).replace("torch.", ""), "allow_tf32": tf32,
            "cpu_ops": list(dict.fromkeys(ops)), "kernels": list(dict.fromkeys(kernels)), "rel_err": err}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = ap.parse_args()
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("trace_torch_mm: torch sees no GPU; nothing traced")
    shrink = 1 if args.device == "cuda" else 64
    doc = {"torch": torch.__version__, "git_version": torch.version.git_version, "cuda": torch.version.cuda,
           "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else "none (--device cpu)",
           "cublaslt_log": os.environ.get("CUBLASLT_LOG_FILE", ""), "cases": []}
    try:
        doc["preferred_blas_library"] = str(torch.backends.cuda.preferred_blas_library())
    except (AttributeError, RuntimeError) as e:
        doc["preferred_blas_library"] = f"unknown ({e})"
    for m, k, n, dtype, tf32 in [(4096, 4096, 4096, torch.float32, False), (4096, 4096, 4096, torch.float32, True),
                                 (64, 768, 2304, torch.float32, False), (4096, 4096, 4096, torch.bfloat16, False)]:
        case = trace_case(torch, max(1, m // shrink), max(1, k // shrink), max(1, n // shrink), dtype, tf32, args.device)
        doc["cases"].append(case)
        print(f"{case['m']}x{case['k']}x{case['n']} {case['dtype']} tf32={tf32}: {' -> '.join(case['cpu_ops'])} | kernels: {case['kernels']}")
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
