// Which kernel runs an attention call, by device and variant name, on plain (untraced) tensors:
// the library's FlashAttention-2 on the CPU, a registered CPU variant by name, or the backend's
// flash or standard kernel on CUDA. attention_forward and attention_backward are this with checks.
#include "framework/core/autograd/autograd.h"
#include "ops/attention/attention.h"
#include "ops/attention/attention_internal.h"
#include "ops/attention/cpu/kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace attention_detail {
namespace {

// The library's CPU kernel, FlashAttention-2, by any of its names.
bool is_flash2(const std::string& impl) { return is_default(impl) || impl == "flash2"; }

// On CUDA, "standard" is cuBLAS with P materialised; every other name is the flash kernel.
bool cuda_standard(const AttentionOptions& opt) { return opt.impl == "standard"; }

Tensor contiguous_or_none(const Tensor& t) { return t.defined() ? t.contiguous() : t; }
Tensor unboxed(const Tensor& t) { return t.defined() ? autograd::unbox_all(t) : t; }

}  // namespace

AttentionForward forward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const AttentionOptions& opt) {
  const int64_t kv_stride = q0.device() == Device::CPU ? uniform_slice_stride(k0) : 0;
  const bool kv_in_place = kv_stride != 0 && uniform_slice_stride(v0) == kv_stride;
  Tensor q = q0.contiguous(), k = kv_in_place ? k0 : k0.contiguous(), v = kv_in_place ? v0 : v0.contiguous();
  Shape lead = lead_dims(q);
  const int64_t nq = q.size(-2), nk = k.size(-2);
  AttentionForward r;
  r.out = empty(q.shape(), q.dtype(), q.device());
  r.lse = empty(with(lead, {nq}), q.dtype(), q.device());
  if (q.device() == Device::CUDA) {
    if (cuda_standard(opt)) r.saved = empty({q.numel() / (nq * q.size(-1)), nq, nk}, q.dtype(), q.device());
    cuda_kernels::attention_forward(cuda_dims(q, k, opt), !cuda_standard(opt), q, k, v, r.saved, r.out, r.lse);
    return r;
  }
  check_cpu(q, "attention");
  AttentionArgs a = args_of(q, k, v, opt);
  if (kv_in_place) a.kv_bh_stride = kv_stride;
  if (is_flash2(opt.impl)) {
    EMBER_DISPATCH_FLOAT(q.dtype(), "attention", [&] {
      cpu::attn::flash2_forward(cpu::attn::Problem<scalar_t>::of(a), q.data<scalar_t>(), k.data<scalar_t>(),
                                v.data<scalar_t>(), r.out.data<scalar_t>(), r.lse.data<scalar_t>());
    });
    return r;
  }
  r.saved = cpu_kernels(opt.impl).forward(a, r.out.raw_data(), r.lse.raw_data());
  return r;
}

AttentionGrads backward_raw(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& out0,
                            const Tensor& lse0, const Tensor& saved0, const Tensor& dout0, const AttentionOptions& opt) {
  Tensor q = q0.contiguous(), k = k0.contiguous(), v = v0.contiguous(), out = out0.contiguous(),
         lse = contiguous_or_none(lse0), saved = contiguous_or_none(saved0), dout = dout0.contiguous();
  AttentionGrads g{empty(q.shape(), q.dtype(), q.device()), empty(k.shape(), k.dtype(), k.device()),
                   empty(v.shape(), v.dtype(), v.device())};
  const bool needs_lse = q.device() == Device::CUDA ? !cuda_standard(opt) : is_flash2(opt.impl);
  EMBER_CHECK(!needs_lse || lse.defined(), "attention backward (", is_default(opt.impl) ? "auto" : opt.impl,
              "): lse (the forward's row log-sum-exp) is undefined");
  if (q.device() == Device::CUDA) {
    Tensor p, ds;
    if (cuda_standard(opt)) {
      p = saved.defined() ? saved : forward_raw(q, k, v, opt).saved;  // P recomputed when the caller kept none
      ds = empty(p.shape(), q.dtype(), q.device());
    }
    cuda_kernels::attention_backward(cuda_dims(q, k, opt), !cuda_standard(opt), q, k, v, out, p.defined() ? p : lse,
                                     dout, ds, g.dq, g.dk, g.dv);
    return g;
  }
  check_cpu(q, "attention backward");
  if (is_flash2(opt.impl)) {
    EMBER_DISPATCH_FLOAT(q.dtype(), "attention backward", [&] {
      auto pr = cpu::attn::Problem<scalar_t>::of(args_of(q, k, v, opt));
      cpu::attn::flash2_backward(pr, q.data<scalar_t>(), k.data<scalar_t>(), v.data<scalar_t>(), out.data<scalar_t>(),
                                 lse.data<scalar_t>(), dout.data<scalar_t>(), g.dq.data<scalar_t>(),
                                 g.dk.data<scalar_t>(), g.dv.data<scalar_t>());
    });
    return g;
  }
  AttentionGradArgs ga;
  ga.out = out.raw_data();
  ga.lse = lse.defined() ? lse.raw_data() : nullptr;
  ga.saved = saved;
  ga.dout = dout.raw_data();
  ga.dq = g.dq.raw_data();
  ga.dk = g.dk.raw_data();
  ga.dv = g.dv.raw_data();
  cpu_kernels(opt.impl).backward(args_of(q, k, v, opt), ga);
  return g;
}

}  // namespace attention_detail

using namespace attention_detail;

AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  check_qkv("attention_forward", q, k, v, opt);
  check_impl(opt, q.device());
  return forward_raw(autograd::unbox_all(q), autograd::unbox_all(k), autograd::unbox_all(v), opt);
}

AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& lse, const Tensor& saved, const Tensor& dout,
                                  const AttentionOptions& opt) {
  const char* op = "attention_backward";
  check_qkv(op, q, k, v, opt);
  check_like(op, "out", out, q.shape(), q);
  check_like(op, "dout", dout, q.shape(), q);
  if (lse.defined()) check_like(op, "lse", lse, with(lead_dims(q), {q.size(-2)}), q);
  if (saved.defined()) {
    EMBER_CHECK(saved.dtype() == q.dtype(), op, ": saved is ", saved.dtype(), ", expected ", q.dtype());
    EMBER_CHECK(saved.device() == q.device(), op, ": saved is on ", saved.device(), ", expected ", q.device());
  }
  check_impl(opt, q.device());
  if (autograd::any_traced({&q, &k, &v, &out, &lse, &saved, &dout})) return backward_composite(q, k, v, out, dout, opt);
  return backward_raw(unboxed(q), unboxed(k), unboxed(v), unboxed(out), unboxed(lse), unboxed(saved), unboxed(dout),
                      opt);
}

}  // namespace ember
