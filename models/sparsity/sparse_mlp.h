// A transformer MLP, y = gelu_tanh(x W1 + b1) W2 + b2 with W1 (C x N) and W2 (N x C) as GPT-2
// stores them, computed two ways: densely with Ember's ops (optionally with a 0/1 mask on the N
// hidden units), and by a gathered kernel that touches only the weights of the units each token
// keeps: for unit j, column j of W1 (kept as row j of W1^T so that it is contiguous) and row j of
// W2. With k of N units kept, the gathered kernel reads and multiplies k/N of the weights.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::sparsity {

struct MlpWeights {
  Tensor fc_w;    // (C, N): GPT-2's mlp.c_fc.weight
  Tensor fc_b;    // (N)
  Tensor proj_w;  // (N, C): mlp.c_proj.weight
  Tensor proj_b;  // (C)
  void check() const;  // ember::Error naming the mismatched tensor
  int64_t width() const { return fc_w.size(0); }
  int64_t hidden() const { return fc_w.size(1); }
};

// Dense reference with Ember's ops: x (..., C) -> (..., C); a defined hidden_mask (..., N) of 0/1
// multiplies the hidden units after the GELU (so masked units contribute nothing).
Tensor dense_mlp(const Tensor& x, const MlpWeights& w, const Tensor& hidden_mask = Tensor());

class GatheredMLP {
 public:
  explicit GatheredMLP(const MlpWeights& w);  // float32 CPU weights; copies W1 transposed

  // x (B, C) float32; sets[b] lists the hidden units token b keeps (distinct, in [0, N)). Only
  // units in the union of the sets are computed, each from one pass over its weights for all
  // tokens; a unit outside a token's own set is zero for that token. Equals
  // dense_mlp(x, w, mask of the sets) up to float rounding.
  Tensor forward(const Tensor& x, const std::vector<std::vector<int32_t>>& sets) const;
  // Every unit through the same kernel: the dense baseline with the same code path.
  Tensor forward_all(const Tensor& x) const;

  int64_t width() const { return C_; }
  int64_t hidden() const { return N_; }

 private:
  int64_t C_, N_;
  std::vector<float> w1t_;  // (N, C): row j holds unit j's input weights
  std::vector<float> b1_, w2_, b2_;
};

}  // namespace ember::sparsity
