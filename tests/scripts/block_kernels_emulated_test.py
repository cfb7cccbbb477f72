#!/usr/bin/python3
"""Every CUDA source whose kernels cooperate through shared memory or barriers keeps their logic in
a header that a CPU block emulator test runs (tests/**/*emulator_test.cpp), so that no such kernel
joins without being checked on a machine without a GPU; and no kernel uses warp shuffles, which the
emulators do not model lane by lane (examples/matmul/GPU.md lists the kernels and why the others
need no emulator)."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def sources(suffixes, under):
    for top in under:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
            for f in filenames:
                if f.endswith(suffixes):
                    yield os.path.join(dirpath, f)


def includes(path, seen=None):
    """The repository headers a file includes, followed through the headers it includes."""
    seen = set() if seen is None else seen
    for inc in INCLUDE.findall(open(path, errors="replace").read()):
        full = os.path.join(ROOT, inc)
        if os.path.exists(full) and inc not in seen:
            seen.add(inc)
            includes(full, seen)
    return seen


class BlockKernelsEmulated(unittest.TestCase):
    def test_every_cooperating_kernel_has_an_emulated_header(self):
        # The kernels' own headers an emulator test includes (not the CPU references it compares with).
        emulated = set()
        for t in sources(("emulator_test.cpp",), ["tests"]):
            emulated |= {inc for inc in INCLUDE.findall(open(t).read()) if re.match(r"(ops/.+/cuda/|examples/.+/study/)", inc)}
        self.assertTrue(emulated, "no emulator tests found")
        cooperating = 0
        for cu in sources((".cu",), ["framework", "ops", "examples", "models"]):
            text = open(cu, errors="replace").read()
            if "__syncthreads" not in text and "__shared__" not in text:
                continue
            cooperating += 1
            rel = os.path.relpath(cu, ROOT)
            self.assertTrue(includes(cu) & emulated,
                            f"{rel} has shared memory or barriers but includes no header an *emulator_test.cpp runs: "
                            "put its per-thread phases in a header and emulate them (see examples/matmul/GPU.md)")
        self.assertGreaterEqual(cooperating, 7)  # attention, the matmul study, reduce, softmax, two norms, cross-entropy

    def test_no_warp_shuffles(self):
        for path in sources((".cu", ".cuh", ".h"), ["framework", "ops", "examples", "models"]):
            self.assertNotRegex(open(path, errors="replace").read(), r"__shfl\w*\(",
                                f"{os.path.relpath(path, ROOT)} uses a warp shuffle, which no CPU emulator models lane "
                                "by lane yet: add one before the kernel")


if __name__ == "__main__":
    unittest.main()
