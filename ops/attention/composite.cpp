// Attention written with Ember's differentiable ops. It is the float64 reference of the tests, the
// formula of attention's JVP, and what the backward ops compute when their inputs are traced (so
// that grad-of-grad through attention works; the kernels themselves are first-order only).
#include <cmath>
#include <limits>

#include "ops/attention/attention.h"
#include "ops/attention/attention_math.h"
#include "ops/attention/attention_internal.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"

namespace ember {
namespace attention_detail {

Tensor causal_mask(int64_t nq, int64_t nk, DType dtype, Device device) {
  std::vector<double> m(size_t(nq * nk), 0.0);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = attention_math::visible_keys(i, nq, nk, true); j < nk; ++j) m[size_t(i * nk + j)] = 1.0;
  Tensor t = from_vector(m, {nq, nk});
  if (dtype != DType::Float64) t = t.to(dtype);
  return device == Device::CPU ? t : t.to(device);
}

Tensor probs_composite(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  const double scale = effective_scale(opt, q.size(-1));
  Tensor s = matmul(q, k.transpose(-2, -1)) * scale;
  if (opt.causal)
    s = masked_fill(s, causal_mask(q.size(-2), k.size(-2), s.dtype(), s.device()), -std::numeric_limits<double>::infinity());
  // Softmax is unchanged by shifting a row, so the shift needs no derivative.
  Tensor e = exp(s - max(s, -1, true).detach());
  return e / sum(e, {-1}, true);
}

AttentionGrads backward_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                  const Tensor& dout, const AttentionOptions& opt) {
  const double scale = effective_scale(opt, q.size(-1));
  Tensor p = probs_composite(q, k, opt);
  Tensor dv = matmul(p.transpose(-2, -1), dout);
  Tensor dp = matmul(dout, v.transpose(-2, -1));
  Tensor ds = p * (dp - sum(dout * out, {-1}, true));
  return {matmul(ds, k) * scale, matmul(ds.transpose(-2, -1), q) * scale, dv};
}

// dO = dP V + P dV with dP = P * (dS - rowsum(P * dS)), dS = scale (dQ K^T + Q dK^T).
// Masked entries need no care: P is exactly zero there.
Tensor jvp_composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& tq, const Tensor& tk,
                     const Tensor& tv, const AttentionOptions& opt) {
  const double scale = effective_scale(opt, q.size(-1));
  Tensor p = probs_composite(q, k, opt);
  Tensor out;
  if (tq.defined() || tk.defined()) {
    Tensor ds;
    if (tq.defined()) ds = matmul(tq, k.transpose(-2, -1));
    if (tk.defined()) ds = ds.defined() ? ds + matmul(q, tk.transpose(-2, -1)) : matmul(q, tk.transpose(-2, -1));
    ds = ds * scale;
    Tensor dp = p * (ds - sum(p * ds, {-1}, true));
    out = matmul(dp, v);
  }
  if (tv.defined()) out = out.defined() ? out + matmul(p, tv) : matmul(p, tv);
  return out;
}

}  // namespace attention_detail

Tensor attention_composite(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  attention_detail::check_qkv("attention_composite", q, k, v, opt);
  return matmul(attention_detail::probs_composite(q, k, opt), v);
}

}  // namespace ember
