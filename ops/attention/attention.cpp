// attention(): checks, the choice of algorithm and device, and the VJP / JVP. The kernels live in
// cpu/ and cuda/; the composite formula in Ember ops in composite.cpp.
#include "ops/attention/attention.h"

#include <unistd.h>

#include <cmath>
#include <memory>

#include "framework/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/attention/attention_internal.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {

const char* name(AttentionImpl impl) {
  return impl == AttentionImpl::Standard ? "standard" : impl == AttentionImpl::Flash ? "flash" : "flash2";
}

AttentionImpl parse_attention_impl(const std::string& s) {
  if (s == "standard") return AttentionImpl::Standard;
  if (s == "flash") return AttentionImpl::Flash;
  if (s == "flash2") return AttentionImpl::Flash2;
  throw Error(str("unknown attention impl '", s, "' (expected standard, flash or flash2)"));
}

int64_t default_attention_block_m() {
  // Half of the L2 cache: the other half holds what streams through (V_j rows, O_i, the stack).
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0) l2 = 512 * 1024;
  return std::max<int64_t>(int64_t(l2) / 2 / int64_t(sizeof(float)), 1024);
}

AttentionBlocks attention_blocks(int64_t d, int64_t block_m) {
  EMBER_CHECK(d >= 1, "attention_blocks: head size d must be >= 1, got ", d);
  int64_t m = block_m > 0 ? block_m : default_attention_block_m();
  EMBER_CHECK(m >= 4 * d, "attention: block_m (on-chip budget M, in floats) must be at least 4 d = ", 4 * d,
              " so that a block holds one row, got ", m);
  int64_t bc = (m + 4 * d - 1) / (4 * d);
  return {m, std::min(bc, d), bc};
}

namespace attention_detail {

double effective_scale(const AttentionOptions& opt, int64_t d) {
  return opt.scale != 0 ? opt.scale : 1.0 / std::sqrt(double(d));
}

void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  EMBER_CHECK(q.defined() && k.defined() && v.defined(), op, ": q, k and v must be defined");
  auto shapes = [&] { return str(" (q ", to_string(q.shape()), ", k ", to_string(k.shape()), ", v ", to_string(v.shape()), ")"); };
  EMBER_CHECK(q.dim() >= 2 && q.dim() == k.dim() && q.dim() == v.dim(), op,
              ": expected q (..., Nq, d), k and v (..., Nk, d) of the same rank >= 2", shapes());
  EMBER_CHECK(k.shape() == v.shape(), op, ": k and v must have the same shape", shapes());
  for (int64_t i = 0; i + 2 < q.dim(); ++i)
    EMBER_CHECK(q.size(i) == k.size(i), op, ": leading (batch, head) dims of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) == k.size(-1), op, ": head size d of q and k differ", shapes());
  EMBER_CHECK(q.size(-1) >= 1 && q.size(-2) >= 1 && k.size(-2) >= 1, op, ": empty sequence or head", shapes());
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), op, ": dtypes differ: q ", q.dtype(), ", k ", k.dtype(),
              ", v ", v.dtype());
  EMBER_CHECK(is_floating(q.dtype()), op, ": expected float32 or float64, got ", q.dtype());
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(), op, ": devices differ: q ", q.device(), ", k ",
              k.device(), ", v ", v.device());
  EMBER_CHECK(!opt.causal || k.size(-2) >= q.size(-2), op, ": causal attention needs Nk >= Nq (every query sees ",
              "at least one key)", shapes());
  EMBER_CHECK(std::isfinite(opt.scale), op, ": scale must be finite, got ", opt.scale);
  EMBER_CHECK(opt.block_m >= 0, op, ": block_m must be >= 0 (0 = default), got ", opt.block_m);
}

}  // namespace attention_detail

namespace {
using namespace attention_detail;

Shape lead_dims(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

template <class T>
cpu::attn::Problem<T> problem(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  cpu::attn::Problem<T> p;
  p.nq = q.size(-2);
  p.nk = k.size(-2);
  p.d = q.size(-1);
  p.bh = q.numel() / (p.nq * p.d);
  p.scale = T(effective_scale(opt, p.d));
  p.causal = opt.causal;
  AttentionBlocks b = attention_blocks(p.d, opt.block_m);
  p.br = b.br;
  p.bc = b.bc;
  return p;
}

cuda_kernels::AttentionDims cuda_dims(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  cuda_kernels::AttentionDims dm;
  dm.nq = q.size(-2);
  dm.nk = k.size(-2);
  dm.d = q.size(-1);
  dm.bh = q.numel() / (dm.nq * dm.d);
  dm.scale = effective_scale(opt, dm.d);
  dm.causal = opt.causal;
  return dm;
}

// When t's rows of d elements are contiguous, d apart within each batch*head slice, and the slices
// a uniform distance apart (at least a slice long), that distance; 0 otherwise. A KV cache's
// views over its filled positions have this shape, so the CPU forward reads them in place instead
// of copying the whole cache every generation step.
int64_t uniform_slice_stride(const Tensor& t) {
  const int64_t n = t.size(-2), d = t.size(-1);
  if (t.strides().back() != 1 || (n > 1 && t.strides()[size_t(t.dim() - 2)] != d)) return 0;
  int64_t step = 0, span = 0;
  for (int64_t i = t.dim() - 3; i >= 0; --i) {
    const int64_t size = t.size(i), stride = t.strides()[size_t(i)];
    if (size == 1) continue;
    if (step == 0) {
      if (stride < n * d) return 0;  // slices would overlap (e.g. a broadcast)
      step = stride;
    } else if (stride != span) {
      return 0;
    }
    span = stride * size;
  }
  return step == 0 ? n * d : step;
}

// Flash2 is a CPU kernel; on other devices it means their flash kernel.
AttentionOptions for_device(const AttentionOptions& opt, Device device) {
  AttentionOptions o = opt;
  if (device != Device::CPU && o.impl == AttentionImpl::Flash2) o.impl = AttentionImpl::Flash;
  return o;
}

// The kernels on raw (untraced) tensors.
AttentionForward forward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const AttentionOptions& opt0,
                             bool keep_probs) {
  const AttentionOptions opt = for_device(opt0, q0.device());
  const int64_t kv_stride = q0.device() == Device::CPU ? uniform_slice_stride(k0) : 0;
  const bool kv_in_place = kv_stride != 0 && uniform_slice_stride(v0) == kv_stride;
  Tensor q = q0.contiguous(), k = kv_in_place ? k0 : k0.contiguous(), v = kv_in_place ? v0 : v0.contiguous();
  Shape lead = lead_dims(q);
  const int64_t nq = q.size(-2), nk = k.size(-2), d = q.size(-1);
  AttentionForward r;
  r.out = empty(q.shape(), q.dtype(), q.device());
  r.lse = empty(with(lead, {nq}), q.dtype(), q.device());
  Tensor p;
  if (opt.impl == AttentionImpl::Standard) p = empty(with(lead, {nq, nk}), q.dtype(), q.device());
  if (q.device() == Device::CUDA) {
    cuda_kernels::attention_forward(cuda_dims(q, k, opt), opt.impl == AttentionImpl::Flash, q, k, v, p, r.out, r.lse);
    if (keep_probs) r.probs = p;
    return r;
  }
  check_cpu(q, "attention");
  (void)d;
  EMBER_DISPATCH_FLOAT(q.dtype(), "attention", [&] {
    auto pr = problem<scalar_t>(q, k, opt);
    if (kv_in_place) pr.kv_bh_stride = kv_stride;
    if (opt.impl == AttentionImpl::Flash2)
      cpu::attn::flash2_forward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), r.out.data<scalar_t>(),
                                r.lse.data<scalar_t>());
    else if (opt.impl == AttentionImpl::Flash)
      cpu::attn::flash_forward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), r.out.data<scalar_t>(),
                               r.lse.data<scalar_t>());
    else
      cpu::attn::standard_forward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), p.data<scalar_t>(),
                                  r.out.data<scalar_t>(), r.lse.data<scalar_t>());
  });
  if (keep_probs) r.probs = p;
  return r;
}

void check_like(const char* op, const char* what, const Tensor& t, const Shape& shape, const Tensor& q) {
  EMBER_CHECK(t.defined(), op, ": ", what, " is undefined");
  EMBER_CHECK(t.shape() == shape, op, ": ", what, " has shape ", to_string(t.shape()), ", expected ", to_string(shape));
  EMBER_CHECK(t.dtype() == q.dtype(), op, ": ", what, " is ", t.dtype(), ", expected ", q.dtype());
  EMBER_CHECK(t.device() == q.device(), op, ": ", what, " is on ", t.device(), ", expected ", q.device());
}

AttentionGrads backward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& out0,
                            const Tensor& aux0, const Tensor& dout0, const AttentionOptions& opt0) {
  const AttentionOptions opt = for_device(opt0, q0.device());
  Tensor q = q0.contiguous(), k = k0.contiguous(), v = v0.contiguous(), out = out0.contiguous(),
         aux = aux0.contiguous(), dout = dout0.contiguous();
  AttentionGrads g{empty(q.shape(), q.dtype(), q.device()), empty(k.shape(), k.dtype(), k.device()),
                   empty(v.shape(), v.dtype(), v.device())};
  Tensor ds;
  if (opt.impl == AttentionImpl::Standard) ds = empty(aux.shape(), q.dtype(), q.device());
  if (q.device() == Device::CUDA) {
    cuda_kernels::attention_backward(cuda_dims(q, k, opt), opt.impl == AttentionImpl::Flash, q, k, v, out, aux, dout, ds,
                                     g.dq, g.dk, g.dv);
    return g;
  }
  check_cpu(q, "attention backward");
  EMBER_DISPATCH_FLOAT(q.dtype(), "attention backward", [&] {
    auto pr = problem<scalar_t>(q, k, opt);
    if (opt.impl == AttentionImpl::Flash2)
      cpu::attn::flash2_backward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), out.data<scalar_t>(),
                                 aux.data<scalar_t>(), dout.data<scalar_t>(), g.dq.data<scalar_t>(),
                                 g.dk.data<scalar_t>(), g.dv.data<scalar_t>());
    else if (opt.impl == AttentionImpl::Flash)
      cpu::attn::flash_backward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), out.data<scalar_t>(),
                                aux.data<scalar_t>(), dout.data<scalar_t>(), g.dq.data<scalar_t>(),
                                g.dk.data<scalar_t>(), g.dv.data<scalar_t>());
    else
      cpu::attn::standard_backward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(),
                                   out.data<scalar_t>(), aux.data<scalar_t>(), dout.data<scalar_t>(),
                                   ds.data<scalar_t>(), g.dq.data<scalar_t>(), g.dk.data<scalar_t>(),
                                   g.dv.data<scalar_t>());
  });
  return g;
}

void check_backward_args(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                         const Tensor& dout, const AttentionOptions& opt) {
  check_qkv(op, q, k, v, opt);
  check_like(op, "out", out, q.shape(), q);
  check_like(op, "dout", dout, q.shape(), q);
}

using AttentionCall = OpCall<AttentionOptions>;

// The kernels save what their backward needs as extras: the row log-sum-exp, and P for Standard.
KernelOut forward_kernel(const Args& a, const AttentionOptions& opt) {
  AttentionForward r = forward_raw(a[0], a[1], a[2], opt, opt.impl == AttentionImpl::Standard);
  return {r.out, {r.lse, r.probs}};
}

Grads as_grads(const AttentionGrads& g) { return {g.dq, g.dk, g.dv}; }

const Primitive<AttentionOptions>& attention_op() {
  static const Primitive<AttentionOptions> p = [] {
    auto with = [](AttentionImpl impl) {
      return [impl](const Args& a, const AttentionOptions& opt) {
        AttentionOptions o = opt;
        o.impl = impl;
        return forward_kernel(a, o);
      };
    };
    // One backward kernel per algorithm, from the forward's saved statistics (P for Standard, the
    // log-sum-exp for Flash), on whichever device the tensors live.
    auto fused = [](const Tensor& g, const AttentionCall& c) {
      const Tensor &q = c.in[0], &k = c.in[1], &v = c.in[2], &lse = c.extras[0], &probs = c.extras[1];
      AttentionOptions o = c.attrs;
      o.impl = probs.defined() ? AttentionImpl::Standard
               : c.attrs.impl == AttentionImpl::Flash ? AttentionImpl::Flash : AttentionImpl::Flash2;
      return as_grads(backward_raw(q, k, v, c.out, probs.defined() ? probs : lse, g, o));
    };
    Primitive<AttentionOptions> op("attention");
    op.cpu(forward_kernel).cuda(forward_kernel);
    for (Device d : {Device::CPU, Device::CUDA})
      for (AttentionImpl i : {AttentionImpl::Standard, AttentionImpl::Flash, AttentionImpl::Flash2})
        if (d == Device::CPU || op.info().kernel[size_t(Device::CUDA)]) op.variant(d, name(i), with(i));
    op.vjp([](const Tensor& g, const AttentionCall& c) {
        return as_grads(backward_composite(c.in[0], c.in[1], c.in[2], c.out, g, c.attrs));
      })
        .fused_vjp(Device::CPU, fused)
        .fused_vjp(Device::CUDA, fused)
        .jvp([](const Args& t, const AttentionCall& c) {
          return jvp_composite(c.in[0], c.in[1], c.in[2], t[0], t[1], t[2], c.attrs);
        });
    return op;
  }();
  return p;
}

}  // namespace

AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
                                   bool keep_probs) {
  check_qkv("attention_forward", q, k, v, opt);
  return forward_raw(autograd::unbox_all(q), autograd::unbox_all(k), autograd::unbox_all(v), opt, keep_probs);
}

AttentionGrads attention_backward_standard(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                           const Tensor& probs, const Tensor& dout, const AttentionOptions& opt) {
  const char* op = "attention_backward_standard";
  check_backward_args(op, q, k, v, out, dout, opt);
  if (probs.defined()) check_like(op, "probs", probs, with(lead_dims(q), {q.size(-2), k.size(-2)}), q);
  if (autograd::any_traced({&q, &k, &v, &out, &probs, &dout})) return backward_composite(q, k, v, out, dout, opt);
  AttentionOptions o = opt;
  o.impl = AttentionImpl::Standard;
  Tensor qr = autograd::unbox_all(q), kr = autograd::unbox_all(k), vr = autograd::unbox_all(v);
  Tensor p = probs.defined() ? autograd::unbox_all(probs) : forward_raw(qr, kr, vr, o, true).probs;
  return backward_raw(qr, kr, vr, autograd::unbox_all(out), p, autograd::unbox_all(dout), o);
}

AttentionGrads attention_backward_flash(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& lse, const Tensor& dout, const AttentionOptions& opt) {
  const char* op = "attention_backward_flash";
  check_backward_args(op, q, k, v, out, dout, opt);
  if (lse.defined()) check_like(op, "lse", lse, with(lead_dims(q), {q.size(-2)}), q);
  if (autograd::any_traced({&q, &k, &v, &out, &lse, &dout})) return backward_composite(q, k, v, out, dout, opt);
  EMBER_CHECK(lse.defined(), op, ": lse (the forward's row log-sum-exp) is undefined");
  AttentionOptions o = opt;
  o.impl = opt.impl == AttentionImpl::Flash ? AttentionImpl::Flash : AttentionImpl::Flash2;
  return backward_raw(autograd::unbox_all(q), autograd::unbox_all(k), autograd::unbox_all(v),
                      autograd::unbox_all(out), autograd::unbox_all(lse), autograd::unbox_all(dout), o);
}

void declare_attention_ops() { attention_op(); }

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  check_qkv("attention", q, k, v, opt);
  return attention_op()({q, k, v}, opt);
}

}  // namespace ember
