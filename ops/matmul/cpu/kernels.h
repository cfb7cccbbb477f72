// The CPU matmul variants, each a plain function over GemmArgs.
#pragma once
#include <string>

#include "ops/matmul/matmul.h"

namespace ember::cpu {

void gemm_naive(const GemmArgs& g);
// i-k-j loop order with a row of C kept hot: the simple fast-enough kernel the core ships with.
void gemm_ikj(const GemmArgs& g);
// One row of A (m == 1): streams B once, in its contiguous direction, without packing.
void gemv(const GemmArgs& g);
// The lecture's block algorithm: C is computed block by block (bm x bn, summing bk-long slices of
// k), so that the blocks of A, B and C touched by the inner loops stay in cache. Threads split C's
// row blocks.
void gemm_blocked(const GemmArgs& g, int64_t bm, int64_t bn, int64_t bk);

// The instruction sets the packed kernel has a micro-kernel for, in increasing order.
enum class CpuIsa { Portable, Avx2, Avx512 };
const char* name(CpuIsa isa);
CpuIsa best_cpu_isa();  // the best one this CPU (and OS) supports, detected once
// Packed panels + register micro-kernel (BLIS/OpenBLAS structure), threaded with OpenMP.
// The first form uses best_cpu_isa(); the second forces one (tests run each the CPU supports).
void gemm_packed(const GemmArgs& g);
void gemm_packed(const GemmArgs& g, CpuIsa isa);

// OpenBLAS's cblas_sgemm/dgemm, opened at run time; ember::Error where OpenBLAS is not installed.
void gemm_blas(const GemmArgs& g);
bool blas_available();
// "OpenBLAS 0.3.21 ... / core Haswell / threads 2" when available, "" otherwise.
std::string blas_description();
// Sets OpenBLAS's thread count (no-op without the peer), so that peers use the same cores.
void blas_set_threads(int threads);

}  // namespace ember::cpu
