// The CPU matmul variants, each a plain function over GemmArgs.
#pragma once
#include "ops/matmul/matmul.h"

namespace ember::cpu {

void gemm_naive(const GemmArgs& g);
// i-k-j loop order with a row of C kept hot: the simple fast-enough kernel the core ships with.
void gemm_ikj(const GemmArgs& g);

}  // namespace ember::cpu
