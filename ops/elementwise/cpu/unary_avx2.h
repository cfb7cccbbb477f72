// AVX2 kernels for the float32 unary ops whose scalar libm calls kept them far below memory
// bandwidth (exp, tanh, sigmoid, erf and both GELUs), using ops/common/cpu/avx2_math.h. Chosen at
// run time; the scalar loop stays the reference and serves every other op, dtype and CPU.
#pragma once
#include <cstdint>

#include "ops/elementwise/unary_kinds.h"

namespace ember::cpu {

// True when `op` has an AVX2 kernel and this CPU can run it.
bool unary_avx2_supported(UnaryOp op);
// y[i] = op(x[i]) for i in [0, n), contiguous float32 arrays; only when unary_avx2_supported(op).
void unary_avx2(UnaryOp op, const float* x, float* y, int64_t n);

}  // namespace ember::cpu
