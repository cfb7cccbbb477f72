// The attention primitive: its kernels (the default per device and the named variants), the VJP
// (the backward kernel of the variant that ran the forward) and the JVP, and attention() itself.
// Checks and arguments are in checks.cpp, the variants' registry in variants.cpp, the choice of
// kernel on plain tensors in dispatch.cpp; the library's kernels live in cpu/ and cuda/.
#include "ops/attention/attention.h"

#include "ops/attention/attention_internal.h"
#include "ops/elementwise/elementwise.h"
#include "ops/op_list.h"

namespace ember {

namespace attention_detail {
namespace {

using AttentionCall = OpCall<AttentionOptions>;

// The kernels save what their backward needs as extras: the row log-sum-exp, and the variant's own
// saved tensor (P for the standard algorithms).
// bfloat16 and float16 compute in float32, as matmul does: q, k, v widened, the output rounded once;
// the extras (lse, P) stay float32 for the backward kernel.
Tensor widen(const Tensor& t) { return t.defined() && is_half(t.dtype()) ? cast(t, DType::Float32) : t; }

KernelOut forward_kernel(const Args& a, const AttentionOptions& opt) {
  if (is_half(a[0].dtype())) {
    AttentionForward r = forward_raw(widen(a[0]), widen(a[1]), widen(a[2]), opt);
    return {cast(r.out, a[0].dtype()), {r.lse, r.saved}};
  }
  AttentionForward r = forward_raw(a[0], a[1], a[2], opt);
  return {r.out, {r.lse, r.saved}};
}

Grads as_grads(const AttentionGrads& g) { return {g.dq, g.dk, g.dv}; }

// The backward kernel of the variant that ran the forward, from the forward's saved statistics:
// attention() writes the variant into the options, which the recorded node keeps as c.attrs.
Grads fused_backward(const Tensor& g, const AttentionCall& c) {
  const DType dt = c.in[0].dtype();
  if (is_half(dt)) {
    AttentionGrads r = backward_raw(widen(c.in[0]), widen(c.in[1]), widen(c.in[2]), widen(c.out), c.extras[0],
                                    c.extras[1], widen(g), c.attrs);
    return {cast(r.dq, dt), cast(r.dk, dt), cast(r.dv, dt)};
  }
  return as_grads(backward_raw(c.in[0], c.in[1], c.in[2], c.out, c.extras[0], c.extras[1], g, c.attrs));
}

Grads composite_backward(const Tensor& g, const AttentionCall& c) {
  return as_grads(backward_composite(c.in[0], c.in[1], c.in[2], c.out, g, c.attrs));
}

Tensor composite_jvp(const Args& t, const AttentionCall& c) {
  return jvp_composite(c.in[0], c.in[1], c.in[2], t[0], t[1], t[2], c.attrs);
}

// The library's kernel per device and its names; a call selects one by name (opt.impl or a
// ScopedVariant), and programs add their own CPU variants (register_attention_variant).
AttentionOp attention_primitive() {
  AttentionOp op("attention");
  op.all_devices(forward_kernel);
  op.variant(Device::CPU, "flash2", variant_kernel("flash2"));
  // The CUDA kernels live in the backend (ops/attention/cuda); the names are known here so that a
  // CPU-only build refuses them with the same message as any unknown variant.
  for (const char* v : {"standard", "flash", "flash2"}) op.variant(Device::CUDA, v, variant_kernel(v));
  op.dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16});
  op.vjp(composite_backward)
      .fused_vjp(Device::CPU, fused_backward)
      .fused_vjp(Device::CUDA, fused_backward)
      .jvp(composite_jvp);
  return op;
}

}  // namespace

AttentionOp& attention_op() {
  static AttentionOp p = attention_primitive();
  return p;
}

AttentionOp::Kernel variant_kernel(const std::string& name) {
  return [name](const Args& a, const AttentionOptions& opt) {
    if (opt.impl == name) return forward_kernel(a, opt);
    AttentionOptions o = opt;
    o.impl = name;
    return forward_kernel(a, o);
  };
}

}  // namespace attention_detail

using namespace attention_detail;

void declare_attention_ops() { attention_op(); }

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  // Under autocast the engine casts q, k and v to one dtype (ops/autocast/autocast_policy.cpp).
  check_qkv("attention", q, k, v, opt, /*mixed_dtypes_ok=*/autocast::detail::active());
  const AttentionOp& op = attention_op();
  if (!is_default(opt.impl)) {
    check_impl(opt, q.device());
    ScopedVariant use(op.info(), opt.impl);  // innermost: the option wins over an enclosing scope
    return op({q, k, v}, opt);
  }
  // An enclosing ScopedVariant's choice goes into the options, which the recorded node keeps, so
  // that the backward runs that variant's kernel even outside the scope.
  if (const std::string* scoped = scoped_variant(op.info(), q.device())) {
    AttentionOptions o = opt;
    o.impl = *scoped;
    return op({q, k, v}, o);
  }
  return op({q, k, v}, opt);
}

}  // namespace ember
