// One generation step of GPT-2's attention block for one token with a KV cache, computing only
// the heads the token keeps (Deja Vu's head sparsity, Liu et al. 2023). For a kept head h, with
// x the token's normalised input (ln_1's output, C) and t positions already cached:
//   q_h, k_h, v_h = x W[:, slices of h] + b      (3 x head_dim dot products of length C)
//   p = softmax(q_h . K_h[0..t]^T / sqrt(hd))    (K_h with the new k_h written at position t)
//   y_h = p V_h[0..t]                            (t + 1 vector updates of length hd)
//   out += y_h W_proj[rows of h, :]              (head_dim vector updates of length C)
// and out starts from c_proj's bias. A skipped head costs nothing, except that its key and value
// for this position can still be written (kv_every_head) so that a later token which keeps the
// head finds a complete cache; without that, skipping saves the projections too, and the
// skipped heads' cache entries at this position keep whatever they held.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::sparsity {

struct AttentionWeights {
  Tensor qkv_w;   // (C, 3C): GPT-2's attn.c_attn.weight (queries, then keys, then values)
  Tensor qkv_b;   // (3C)
  Tensor proj_w;  // (C, C): attn.c_proj.weight
  Tensor proj_b;  // (C)
  int64_t n_head = 0;
  void check() const;  // ember::Error naming the mismatched tensor
  int64_t width() const { return qkv_w.size(0); }
  int64_t head_dim() const { return width() / n_head; }
};

// The dense step with Ember's ops, as GPT2::Block computes it with a KVCache: x (1, C) float32;
// keys and values (H, capacity, hd) float32 contiguous, the first t positions cached. Writes the
// token's keys and values of every head at position t, attends over positions [0, t] (Ember's
// attention op with `impl`), multiplies each head's output by head_mask (H) when it is defined
// (0/1: heads outside the set then add nothing), and returns c_proj of the merged heads, (1, C).
Tensor dense_attention_step(const Tensor& x, const AttentionWeights& w, const Tensor& keys, const Tensor& values,
                            int64_t t, const Tensor& head_mask = Tensor(), const std::string& impl = "flash2");

class HeadSparseAttention {
 public:
  explicit HeadSparseAttention(const AttentionWeights& w);  // float32 CPU; copies W_qkv transposed

  // The same step computing only `heads` (distinct, in [0, H)); equals dense_attention_step with
  // the mask of `heads` up to float rounding. kv_every_head: also compute and write the keys and
  // values of the skipped heads (their attention and output are still skipped).
  Tensor step(const Tensor& x, const std::vector<int32_t>& heads, const Tensor& keys, const Tensor& values, int64_t t,
              bool kv_every_head) const;

  int64_t width() const { return C_; }
  int64_t heads() const { return H_; }

 private:
  int64_t C_, H_, hd_;
  std::vector<float> wt_;  // (3C, C): row j holds the input weights of q/k/v output j
  std::vector<float> b_, proj_w_, proj_b_;
};

}  // namespace ember::sparsity
