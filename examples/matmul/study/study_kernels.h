// The matmul study's CPU kernels, the steps from the textbook loop towards the library's packed
// kernel (examples/matmul/README.md). They are not part of the library: a program or test that
// compares them calls register_matmul_study_kernels(), after which matmul selects each by name
// (MatmulOptions::impl = "naive", "ikj" or "blocked") and every table-driven test covers it.
#pragma once
#include <string>

#include "ops/matmul/matmul.h"

namespace ember::matmul_study {

// The textbook i-j-k triple loop.
void gemm_naive(const GemmArgs& g);
// i-k-j loop order with a row of C kept hot: the simple fast-enough kernel the core first shipped.
void gemm_ikj(const GemmArgs& g);

// The lecture's block algorithm: C is computed block by block (m x n, summing k-long slices of the
// inner dimension), so that the blocks of A, B and C touched by the inner loops stay in cache.
// Threads split C's row blocks.
struct BlockSizes {
  int64_t m = 64, n = 256, k = 128;
};
void gemm_blocked(const GemmArgs& g, const BlockSizes& b);

// Adds the blocked kernel with block sizes `b` as the CPU variant `name` (the study registers
// "blocked" with the defaults). ember::Error for a size that is not positive, or a taken name.
void register_blocked_matmul(const std::string& name, const BlockSizes& b);

// Registers "naive", "ikj" and "blocked" (64 x 256 x 128) as CPU variants of matmul. Once per
// process: later calls do nothing, so every test and program may call it.
void register_matmul_study_kernels();

}  // namespace ember::matmul_study
