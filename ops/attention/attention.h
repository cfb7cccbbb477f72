// Scaled dot-product attention, O = softmax(scale * Q K^T [+ causal mask]) V, in three algorithms:
//   Standard  the paper's Algorithm 0: S = scale Q K^T and P = softmax(S) are materialised (N x N).
//   Flash     the paper's Algorithm 1: Q, K, V are visited in blocks that fit an on-chip budget of
//             M floats; the softmax is computed online (running row max m and sum l), so nothing
//             of size N x N is ever allocated; it also returns the row log-sum-exp L for the backward.
//   Flash2    the default: FlashAttention-2's loop order (outer loop over query blocks, O_i and its
//             statistics kept in a per-thread buffer across all key blocks) with the block products
//             on the packed GEMM micro-kernel. On the GPU it runs the Flash kernels.
// Shapes: q (..., Nq, d), k and v (..., Nk, d) with the same leading dims (e.g. (B, H, N, d), (B, N, d)
// or (N, d)). With causal, query i sees keys j <= i + (Nk - Nq) (bottom-right aligned, as with a KV cache).
//
// attention() is differentiable: its VJP calls attention_backward_standard or attention_backward_flash
// (matching opt.impl); its JVP is the composite formula in Ember ops. The backward ops run their own
// kernels on plain tensors; when their inputs are traced (grad of grad) they compute the same result
// with the composite formula in Ember ops instead, so higher-order derivatives work through them.
#pragma once
#include <cstdint>
#include <string>

#include "framework/tensor.h"

namespace ember {

enum class AttentionImpl { Standard, Flash, Flash2 };
const char* name(AttentionImpl impl);
AttentionImpl parse_attention_impl(const std::string& s);  // "standard" | "flash" | "flash2", else ember::Error

struct AttentionOptions {
  bool causal = false;
  AttentionImpl impl = AttentionImpl::Flash2;
  double scale = 0;     // 0 means 1/sqrt(d)
  int64_t block_m = 0;  // CPU: on-chip budget M in floats; 0 means half of this CPU's L2. The CUDA
                        // kernels use fixed 32 x 32 tiles in shared memory and ignore it, and so
                        // does Flash2 (its blocks follow the micro-kernel's register block).
};

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt = {});

// ---- the pieces, for the study and for tests (plain tensors; not recorded) ----

// The block sizes Algorithm 1 uses for head size d and budget M: Bc = ceil(M / 4d), Br = min(Bc, d).
struct AttentionBlocks {
  int64_t m, br, bc;
};
AttentionBlocks attention_blocks(int64_t d, int64_t block_m);
int64_t default_attention_block_m();  // floats; from the L2 size of this CPU

struct AttentionForward {
  Tensor out;    // (..., Nq, d)
  Tensor lse;    // (..., Nq): row log-sum-exp of the scaled, masked scores (both algorithms)
  Tensor probs;  // (..., Nq, Nk): P, Standard only and only when keep_probs (its backward needs it)
};
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
                                   bool keep_probs = false);

struct AttentionGrads {
  Tensor dq, dk, dv;
};
// Algorithm 0's backward: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)),
// dQ = scale dS K, dK = scale dS^T Q. `probs` is P from attention_forward (recomputed when undefined).
AttentionGrads attention_backward_standard(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                           const Tensor& probs, const Tensor& dout, const AttentionOptions& opt);
// Algorithm 1's backward (opt.impl Flash; Flash2's own backward otherwise): recomputes S and P block
// by block from Q, K and the saved log-sum-exp L, with D = rowsum(dO * O), and accumulates dQ, dK,
// dV without any N x N storage.
AttentionGrads attention_backward_flash(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& lse, const Tensor& dout, const AttentionOptions& opt);

// The same function written with Ember's differentiable ops (matmul, exp, max, sum): the float64
// reference in tests and the formula behind the JVP and the traced backward.
Tensor attention_composite(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt = {});

}  // namespace ember
