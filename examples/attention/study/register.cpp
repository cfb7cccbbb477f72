// The study's kernels join attention by an explicit call, not a static initialiser: a static
// library drops an object file that nothing references, and with it any initialiser in it. The
// adapters below hand attention's type-erased AttentionArgs to the kernels as Problem<T>.
#include <algorithm>
#include <mutex>

#include "examples/attention/study/study_kernels.h"

namespace ember::attention_study {
namespace {

template <class T>
const T* in(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
T* out(void* p) {
  return static_cast<T*>(p);
}

// Algorithm 0 keeps P, (BH, Nq, Nk), for its backward.
Tensor standard_fwd(const AttentionArgs& a, void* o, void* lse) {
  Tensor p = empty({a.bh, a.nq, a.nk}, a.dtype);
  EMBER_DISPATCH_FLOAT(a.dtype, "attention (standard)", [&] {
    using T = scalar_t;
    standard_forward(Problem<T>::of(a), in<T>(a.q), in<T>(a.k), in<T>(a.v), p.data<T>(), out<T>(o), out<T>(lse));
  });
  return p;
}

Tensor unfused_fwd(const AttentionArgs& a, void* o, void* lse) {
  Tensor p = empty({a.bh, a.nq, a.nk}, a.dtype);
  EMBER_DISPATCH_FLOAT(a.dtype, "attention (unfused)", [&] {
    using T = scalar_t;
    unfused_forward(Problem<T>::of(a), in<T>(a.q), in<T>(a.k), in<T>(a.v), p.data<T>(), out<T>(o), out<T>(lse));
  });
  return p;
}

void standard_bwd(const AttentionArgs& a, const AttentionGradArgs& g) {
  Tensor p = g.saved;
  if (!p.defined()) {  // the caller kept no P: the forward once more
    Tensor o = empty({a.bh, a.nq, a.d}, a.dtype), lse = empty({a.bh, a.nq}, a.dtype);
    p = standard_fwd(a, o.raw_data(), lse.raw_data());
  }
  EMBER_CHECK(p.numel() == a.bh * a.nq * a.nk && p.dtype() == a.dtype, "attention (standard): the saved P is ",
              p.dtype(), " of shape ", to_string(p.shape()), ", expected ", a.dtype, " of ", a.bh, " x ", a.nq, " x ",
              a.nk, " elements (attention_forward's saved)");
  Tensor ds = empty({a.bh, a.nq, a.nk}, a.dtype);
  EMBER_DISPATCH_FLOAT(a.dtype, "attention backward (standard)", [&] {
    using T = scalar_t;
    standard_backward(Problem<T>::of(a), in<T>(a.q), in<T>(a.k), in<T>(a.v), in<T>(g.out), p.data<T>(),
                      in<T>(g.dout), ds.data<T>(), out<T>(g.dq), out<T>(g.dk), out<T>(g.dv));
  });
}

Tensor flash_fwd(const AttentionArgs& a, void* o, void* lse) {
  EMBER_DISPATCH_FLOAT(a.dtype, "attention (flash)", [&] {
    using T = scalar_t;
    flash_forward(Problem<T>::of(a), in<T>(a.q), in<T>(a.k), in<T>(a.v), out<T>(o), out<T>(lse));
  });
  return Tensor();
}

void flash_bwd(const AttentionArgs& a, const AttentionGradArgs& g) {
  EMBER_CHECK(g.lse != nullptr, "attention backward (flash): lse (the forward's row log-sum-exp) is undefined");
  EMBER_DISPATCH_FLOAT(a.dtype, "attention backward (flash)", [&] {
    using T = scalar_t;
    flash_backward(Problem<T>::of(a), in<T>(a.q), in<T>(a.k), in<T>(a.v), in<T>(g.out), in<T>(g.lse), in<T>(g.dout),
                   out<T>(g.dq), out<T>(g.dk), out<T>(g.dv));
  });
}

}  // namespace

void register_attention_study_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_attention_variant("standard", AttentionKernels{standard_fwd, standard_bwd});
    // Algorithm 0's backward already makes its passes over the whole P and dS, so the unfused
    // forward shares it.
    register_attention_variant("unfused", AttentionKernels{unfused_fwd, standard_bwd});
    register_attention_variant("flash", AttentionKernels{flash_fwd, flash_bwd});
  });
}

AttentionGrads attention_backward_standard(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                           const Tensor& probs, const Tensor& dout, const AttentionOptions& opt) {
  register_attention_study_kernels();
  if (probs.defined() && q.defined() && k.defined() && q.dim() >= 2 && k.dim() >= 2) {
    const int64_t nq = q.size(-2), nk = k.size(-2), bh = q.numel() / std::max<int64_t>(1, nq * q.size(-1));
    EMBER_CHECK(probs.dim() >= 2 && probs.size(-2) == nq && probs.size(-1) == nk && probs.numel() == bh * nq * nk,
                "attention_backward_standard: probs has shape ", to_string(probs.shape()), ", expected (", bh, ", ",
                nq, ", ", nk, ") (P, attention_forward's saved)");
  }
  AttentionOptions o = opt;
  o.impl = "standard";
  return attention_backward(q, k, v, out, Tensor(), probs, dout, o);
}

AttentionGrads attention_backward_flash(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& lse, const Tensor& dout, const AttentionOptions& opt) {
  register_attention_study_kernels();
  AttentionOptions o = opt;
  o.impl = "flash";
  return attention_backward(q, k, v, out, lse, Tensor(), dout, o);
}

}  // namespace ember::attention_study
