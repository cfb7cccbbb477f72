// Attention-head sparsity: each head's output for each token (GPT2::hooks.attn_heads gives them
// as (B, H, T, hd) before the heads are merged and projected) is scored by its L2 norm, and heads
// outside a token's kept set are zeroed, so they add nothing to the attention block's output.
#pragma once
#include "framework/core/tensor.h"

namespace ember::sparsity {

// heads (B, H, T, hd) float32 -> (B, T, H): the L2 norm of each head's output at each token.
Tensor head_norms(const Tensor& heads);
// heads (B, H, T, hd) times a 0/1 mask (B, T, H): head h of token t is kept where mask is 1.
Tensor apply_head_mask(const Tensor& heads, const Tensor& mask);

}  // namespace ember::sparsity
