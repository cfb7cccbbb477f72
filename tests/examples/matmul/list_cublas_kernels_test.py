#!/usr/bin/python3
"""examples/matmul/list_cublas_kernels.py's name parser on kernel names as cuobjdump and c++filt
print them: float32 GEMMs are recognised with their tile, stages and warps; others are not."""
import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "list_cublas_kernels", os.path.join(HERE, "..", "..", "..", "examples", "matmul", "list_cublas_kernels.py"))
lck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lck)


class Describe(unittest.TestCase):
    def test_ampere_ffma_kernel(self):
        d = lck.describe("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4")
        self.assertEqual(d, ("sm80_xmma_gemm (tn)", "FFMA (CUDA cores)", "128x64x8", "3", "2x2x1"))

    def test_hopper_tf32_kernel(self):
        d = lck.describe("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_"
                         "split_k_kernel__5x_cublas")
        self.assertEqual(d, ("sm90_xmma_gemm (nn)", "TF32 (tensor cores)", "128x256x32", "-", "2x1x1"))

    def test_cutlass_simt_and_named_sgemm(self):
        d = lck.describe("void cutlass::Kernel<cutlass_80_simt_sgemm_grouped_128x128_8x4_align1>("
                         "cutlass_80_simt_sgemm_grouped_128x128_8x4_align1::Params)")
        self.assertEqual(d, ("cutlass_80_simt_sgemm (grouped)", "FFMA (CUDA cores)", "128x128x8", "4", "-"))
        d = lck.describe("void sgemm_largek_lds64<true, true, 5, 5, 4, 4, 4, 34>(float*, float const*)")
        self.assertEqual(d[0], "sgemm_largek_lds64")

    def test_other_kernels_are_not_float32_gemms(self):
        for name in ("sm80_xmma_gemm_f16f16_f32f32_f32_nn_n_tilesize64x64x32_stage3_warpsize2x2x1_tensor16x8x16",
                     "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_f16_grouped_128x64_64x3_align8>(P)",
                     "void gemmk1_kernel<int, float, 256, 5, false>(float*)"):
            self.assertIsNone(lck.describe(name), name)


if __name__ == "__main__":
    unittest.main()
