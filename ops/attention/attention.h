// Scaled dot-product attention, O = softmax(scale * Q K^T [+ causal mask]) V. The library ships one
// kernel per device: FlashAttention-2's loop order on the CPU (outer loop over query blocks, O_i
// and its statistics kept in a per-thread buffer across all key blocks, the block products on the
// packed GEMM micro-kernel), the flash kernel on CUDA (with cuBLAS's standard path beside it).
// Studies and users add their own CPU kernels by name (register_attention_variant; the attention
// study's Algorithms 0 and 1 live in examples/attention/study/) and select any of them with
// AttentionOptions::impl or a ScopedVariant, so that one call site runs every variant and every
// test covers every registered one.
// Shapes: q (..., Nq, d), k and v (..., Nk, d) with the same leading dims (e.g. (B, H, N, d), (B, N, d)
// or (N, d)). With causal, query i sees keys j <= i + (Nk - Nq) (bottom-right aligned, as with a KV
// cache; attention_math.h holds the rule).
//
// attention() is differentiable: its VJP runs the backward kernel of the variant that ran the
// forward, from what that forward saved (the row log-sum-exp, and whatever else the variant keeps);
// its JVP is the composite formula in Ember ops. attention_backward runs the same kernels on plain
// tensors; when its inputs are traced (grad of grad) it computes the same result with the composite
// formula in Ember ops instead, so higher-order derivatives work through it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

struct AttentionOptions {
  bool causal = false;
  // The kernel variant by name: "" (or "auto") is the library's kernel for the tensors' device:
  // FlashAttention-2 on the CPU (also "flash2"), the flash kernel on CUDA (also "flash" and
  // "flash2"; "standard" there is cuBLAS with P materialised). Otherwise a CPU variant a program
  // has registered (examples/attention's study adds "standard" and "flash", Algorithms 0 and 1).
  // A name here opens a ScopedVariant (ops/op_list.h) for the call, so it wins over an enclosing
  // one; "" takes the enclosing ScopedVariant's choice, which the recorded call keeps here.
  std::string impl;
  double scale = 0;     // 0 means 1/sqrt(d)
  int64_t block_m = 0;  // CPU: on-chip budget M in floats; 0 means half of this CPU's L2. The
                        // library's CPU kernel uses it only for the key blocks of a generation
                        // step (fewer than 4 queries), where 0 means blocks of 4 KiB of K; the
                        // CUDA kernels use fixed 32 x 32 tiles.
};

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt = {});

// The names registered for `d`, in registration order (without "auto").
std::vector<std::string> attention_variants(Device d);
// parse_variant (framework/core/autograd/op_table.h) for attention: `s` if it names the library's
// kernel ("" or "auto") or a variant registered for `d`; otherwise an ember::Error that lists the
// registered names (and, on the CPU, says how the study's kernels join).
std::string parse_attention_impl(const std::string& s, Device d = Device::CPU);

// ---- the pieces, for studies and tests (plain tensors; not recorded) ----

// The block sizes of the paper's Algorithm 1 for head size d and budget M: Bc = ceil(M / 4d),
// Br = min(Bc, d). The library's generation-step kernel visits keys in blocks of Bc too.
struct AttentionBlocks {
  int64_t m, br, bc;
};
AttentionBlocks attention_blocks(int64_t d, int64_t block_m);
int64_t default_attention_block_m();  // floats; from the L2 size of this CPU

struct AttentionForward {
  Tensor out;    // (..., Nq, d)
  Tensor lse;    // (..., Nq): row log-sum-exp of the scaled, masked scores
  Tensor saved;  // what the variant's backward reads besides them: P, (BH, Nq, Nk), for the
                 // standard algorithm (CUDA's, the study's); undefined for the flash kernels
};
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);

struct AttentionGrads {
  Tensor dq, dk, dv;
};
// The backward of the variant opt.impl names, from the forward's out, lse and saved tensor (either
// of the last two may be undefined where that variant does without: the flash kernels need lse;
// the standard ones recompute P when saved is undefined).
AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& lse, const Tensor& saved, const Tensor& dout,
                                  const AttentionOptions& opt);

// The same function written with Ember's differentiable ops (matmul, exp, max, sum): the float64
// reference in tests and the formula behind the JVP and the traced backward.
Tensor attention_composite(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt = {});

// ---- CPU kernels by name ----

// One attention problem as a CPU kernel sees it: checked, on raw arrays of one dtype. Q (and O,
// dO, dQ) are contiguous (BH, Nq, d), the row log-sum-exp (BH, Nq), K and V (and dK, dV)
// (BH, Nk, d), except that the forward may be handed K and V whose batch*head slices lie
// kv_bh_stride elements apart (the filled part of a KV cache, read in place; rows of d elements
// stay contiguous). The backward always gets contiguous K and V (kv_bh_stride = Nk * d).
struct AttentionArgs {
  DType dtype = DType::Float32;  // Float32 or Float64
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  double scale = 1;          // resolved: 1/sqrt(d) where the option is 0
  bool causal = false;       // query i sees keys j <= i + (nk - nq)
  int64_t block_m = 0;       // the caller's on-chip budget, as given (0: the kernel's default)
  int64_t kv_bh_stride = 0;  // elements between consecutive slices of K (and of V)
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
};
// What a backward kernel gets besides AttentionArgs.
struct AttentionGradArgs {
  const void* out = nullptr;   // the forward's O
  const void* lse = nullptr;   // its row log-sum-exp; nullptr where the caller kept none
  Tensor saved;                // what the forward returned, contiguous; undefined where none was kept
  const void* dout = nullptr;  // dO
  void* dq = nullptr;          // the gradients, written (not accumulated)
  void* dk = nullptr;
  void* dv = nullptr;
};
struct AttentionKernels {
  // Writes O (BH, Nq, d) and the row log-sum-exp (BH, Nq); returns whatever else its backward
  // needs (Algorithm 0: P), or an undefined tensor.
  std::function<Tensor(const AttentionArgs& a, void* out, void* lse)> forward;
  std::function<void(const AttentionArgs& a, const AttentionGradArgs& g)> backward;
};

// Adds a CPU variant of attention named `name`: attention's checks, strided inputs (views), the
// VJP (with the variant's own backward kernel), the JVP and grad of grad all apply to it, and it
// joins the op table (ScopedVariant, the table-driven tests, bench_ops). Other threads may run
// attention meanwhile. ember::Error for an empty kernel, an empty or reserved name ("auto"), or a
// name the CPU already has.
void register_attention_variant(const std::string& name, AttentionKernels kernels);

}  // namespace ember
