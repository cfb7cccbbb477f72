// The library's CPU matmul kernels, each a plain function over GemmArgs (the study's naive, ikj
// and blocked kernels are in examples/matmul/study/ and join matmul by registration).
#pragma once
#include <string>

#include "ops/matmul/matmul.h"

namespace ember::cpu {

// One row of A (m == 1): streams B once, in its contiguous direction, without packing.
void gemv(const GemmArgs& g);

// The instruction sets the packed kernel has a micro-kernel for, in increasing order.
enum class CpuIsa { Portable, Avx2, Avx512 };
const char* name(CpuIsa isa);
CpuIsa best_cpu_isa();  // the best one this CPU (and OS) supports, detected once
// Packed panels + register micro-kernel (BLIS/OpenBLAS structure), threaded with OpenMP.
// The first form uses best_cpu_isa(); the second forces one (tests run each the CPU supports).
void gemm_packed(const GemmArgs& g);
void gemm_packed(const GemmArgs& g, CpuIsa isa);
// Whether gemm_packed(g, isa) reads A where it lies rather than packing it: products with more
// rows than the few-rows path takes, a row-major float32 A, and rows whose stride keeps a block
// of them in the L2 (cache_model.cpp).
bool reads_a_in_place(const GemmArgs& g, CpuIsa isa);
// The rows of B (kc) that each stripe of gemm_packed(g, isa) spans, where g takes the AVX-512
// stripes (few rows, row-major float32 A and B), 0 where it does not: fewer where B's rows land on
// few of the L2's sets, and where B may lie on 4 KiB pages (framework/core/storage.h, on_huge_pages).
int64_t stripe_kc(const GemmArgs& g, CpuIsa isa);
// A B of more than this many bytes comes from memory at every call: products with few rows and a
// row-major B then pack it a group of slivers at a time, in long runs of each row (or, in the
// AVX-512 stripes, read it with a shorter kc; cache_model.cpp): half the L3, at most 64 MiB, by
// default. set_streamed_b_bytes(0) restores that default; tests lower it to reach those paths on
// small products. The setting is atomic; a product already running may have read the old value.
int64_t streamed_b_bytes();
void set_streamed_b_bytes(int64_t bytes);

// OpenBLAS's cblas_sgemm/dgemm, opened at run time; ember::Error where OpenBLAS is not installed.
void gemm_blas(const GemmArgs& g);
bool blas_available();
// "OpenBLAS 0.3.21 ... / core Haswell / threads 2" when available, "" otherwise.
std::string blas_description();
// Sets OpenBLAS's thread count (no-op without the peer), so that peers use the same cores.
void blas_set_threads(int threads);

}  // namespace ember::cpu
