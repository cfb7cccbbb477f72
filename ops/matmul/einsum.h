// einsum over one or more operands, as contractions on matmul: each pair of operands is permuted
// into (batch, kept, contracted) blocks and multiplied as a batched matmul, so it is as fast as
// matmul and differentiable through it (to any order).
#pragma once
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

// equation: lowercase or uppercase letters per operand, comma-separated, optionally "->" and the
// output's letters (without it, the letters that appear once, in alphabetical order). A letter
// repeated within one operand takes the diagonal ("ii->" is the trace). No "..." broadcasting.
// Examples: "ij,jk->ik" (matmul), "bij,bjk->bik" (bmm), "i,j->ij" (outer), "ii->" (trace).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ember
