// The pieces of attention shared by its files (not part of the public API):
//   checks.cpp     the checks and the arguments every kernel call is built from
//   variants.cpp   the CPU variants' kernels by name, their registration and parsing
//   dispatch.cpp   which kernel runs a call (by device and name) on plain tensors
//   attention.cpp  the primitive: its kernels, VJP and JVP, and attention()
//   composite.cpp  the formula in Ember ops (the reference, the JVP, the traced backward)
#pragma once
#include <initializer_list>

#include "framework/core/autograd/primitive.h"
#include "ops/attention/attention.h"
#include "ops/cuda_kernels.h"

namespace ember::attention_detail {

// ---- checks.cpp ----
double effective_scale(const AttentionOptions& opt, int64_t d);
// Checks q (..., Nq, d), k and v (..., Nk, d), dtypes, devices and the options; names `op`.
// mixed_dtypes_ok: q, k and v may differ in dtype (autocast casts them to one at dispatch).
void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
               bool mixed_dtypes_ok = false);
// Checks that `what` (an argument of `op`) has `shape` and q's dtype and device.
void check_like(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& q);
Shape lead_dims(const Tensor& t);  // all but the last two
Shape with(Shape s, std::initializer_list<int64_t> tail);
// The problem as every CPU kernel gets it (K and V contiguous until the caller says otherwise); the
// library's own kernels take it as cpu::attn::Problem<T>::of(args).
AttentionArgs args_of(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);
cuda_kernels::AttentionDims cuda_dims(const Tensor& q, const Tensor& k, const AttentionOptions& opt);
// The distance between t's batch*head slices where it can be read in place (a KV cache's filled
// part); 0 where it cannot.
int64_t uniform_slice_stride(const Tensor& t);

// ---- variants.cpp ----
bool is_default(const std::string& impl);  // "" or "auto"
// The kernels of a registered CPU variant; an unknown name raises parse_attention_impl's error.
const AttentionKernels& cpu_kernels(const std::string& impl);
// opt.impl must name a variant of device d (cheap when it does: no allocation).
void check_impl(const AttentionOptions& opt, Device d);

// ---- dispatch.cpp ----
AttentionForward forward_raw(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);
AttentionGrads backward_raw(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                            const Tensor& saved, const Tensor& dout, const AttentionOptions& opt);

// ---- attention.cpp ----
using AttentionOp = Primitive<AttentionOptions>;
// Not const: register_attention_variant adds to it after its declaration.
AttentionOp& attention_op();
// The kernel of variant `name` in the op table: the call's options with impl set to it.
AttentionOp::Kernel variant_kernel(const std::string& name);

// ---- composite.cpp ----
Tensor causal_mask(int64_t nq, int64_t nk, DType dtype, Device device);  // 1 where key j is hidden from query i
Tensor probs_composite(const Tensor& q, const Tensor& k, const AttentionOptions& opt);
AttentionGrads backward_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& dout, const AttentionOptions& opt);
Tensor jvp_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& tq, const Tensor& tk,
                     const Tensor& tv, const AttentionOptions& opt);

}  // namespace ember::attention_detail
