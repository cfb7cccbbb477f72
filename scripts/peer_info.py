#!/usr/bin/python3
"""What a Python peer runs on: the OpenBLAS core NumPy/SciPy load, and which torch (version, BLAS,
MKL, whether scaled_dot_product_attention exists, its thread count). Facts only: the choice of
OPENBLAS_CORETYPE is made in one place, examples/common/openblas_core.h (the openblas_env tool for
shell scripts); this script is the probe it runs in the peer's python.

    PY scripts/peer_info.py            one JSON document
    PY scripts/peer_info.py --core     just the core of NumPy's OpenBLAS ("" when there is none)

Also importable: `from peer_info import info` (the bench peers put it into their JSON)."""
import json
import os
import platform
import sys


def openblas_libraries():
    """threadpoolctl's view of every loaded OpenBLAS (NumPy's, SciPy's): core and threads."""
    try:
        import numpy  # noqa: F401  (loads NumPy's BLAS)
        try:
            import scipy.linalg  # noqa: F401  (SciPy's wheel bundles its own OpenBLAS)
        except ImportError:
            pass
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return [{"library": d.get("filepath"), "version": d.get("version"), "core": d.get("architecture"),
             "threads": d.get("num_threads"), "internal_api": d.get("internal_api")}
            for d in threadpool_info() if d.get("internal_api") in ("openblas", "mkl", "blis")]


def numpy_core():
    """The core of the OpenBLAS NumPy loaded: threadpoolctl, else ctypes on the mapped libopenblas."""
    libs = openblas_libraries()
    if libs is not None:
        for lib in libs:
            if lib["internal_api"] == "openblas" and lib["core"]:
                return lib["core"]
        return ""
    try:
        import ctypes
        import numpy  # noqa: F401
        paths = sorted({line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line and ".so" in line})
        for path in paths:
            lib = ctypes.CDLL(path)
            for sym in ("openblas_get_corename", "scipy_openblas_get_corename", "openblas_get_corename64_",
                        "scipy_openblas_get_corename64_"):
                fn = getattr(lib, sym, None)
                if fn:
                    fn.restype = ctypes.c_char_p
                    return fn().decode()
    except (ImportError, OSError):
        pass
    return ""


def torch_info():
    try:
        import torch
    except ImportError as e:
        return {"available": False, "error": str(e)}
    cfg = torch.__config__.show()
    import re
    m = re.search(r"BLAS_INFO=([\w.-]+)", cfg)
    blas = m.group(1) if m else "unknown"
    return {"available": True, "version": torch.__version__, "blas": blas,
            "mkl": bool(torch.backends.mkl.is_available()), "mkldnn": bool(torch.backends.mkldnn.is_available()),
            "sdpa": hasattr(torch.nn.functional, "scaled_dot_product_attention"),
            "threads": torch.get_num_threads(), "cuda_build": torch.version.cuda}


def info():
    try:
        import numpy
        np_version = numpy.__version__
    except ImportError:
        np_version = None
    try:
        import scipy
        sp_version = scipy.__version__
    except ImportError:
        sp_version = None
    return {"python": sys.executable, "python_version": platform.python_version(), "numpy": np_version,
            "scipy": sp_version, "openblas_core": numpy_core(), "blas_libraries": openblas_libraries(),
            "torch": torch_info(), "cores": os.cpu_count(),
            "env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
                    if k in os.environ}}


def summary(doc):
    """One line for a table header."""
    t = doc["torch"]
    torch_part = (f"torch {t['version']} (BLAS {t['blas']}, MKL {'yes' if t['mkl'] else 'no'}, "
                  f"sdpa {'yes' if t['sdpa'] else 'no'})") if t.get("available") else "no torch"
    return (f"{doc['python']} (Python {doc['python_version']}): {torch_part}, NumPy {doc['numpy']}, "
            f"SciPy {doc['scipy']}, NumPy's OpenBLAS core {doc['openblas_core'] or 'none'}")


if __name__ == "__main__":
    if "--core" in sys.argv[1:]:
        print(numpy_core())
    else:
        doc = info()
        doc["summary"] = summary(doc)
        print(json.dumps(doc, indent=1))
