#include "framework/optim/adam.h"

#include <cmath>

#include "ops/elementwise/elementwise.h"

namespace ember::optim {

Adam::Adam(std::vector<Tensor> params, AdamOptions opt) : Adam(std::move(params), opt, false) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions opt, bool decoupled)
    : Optimizer(std::move(params), opt.lr), opt_(opt), decoupled_(decoupled) {
  const char* who = decoupled ? "AdamW" : "Adam";
  EMBER_CHECK(opt.beta1 >= 0 && opt.beta1 < 1 && opt.beta2 >= 0 && opt.beta2 < 1, who,
              ": betas must be in [0, 1), got (", opt.beta1, ", ", opt.beta2, ")");
  EMBER_CHECK(opt.eps > 0, who, ": eps must be > 0, got ", opt.eps);
  EMBER_CHECK(opt.weight_decay >= 0, who, ": weight_decay must be >= 0, got ", opt.weight_decay);
  m_ = &add_buffer("exp_avg");
  v_ = &add_buffer("exp_avg_sq");
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions opt) : Adam(std::move(params), opt, true) {}

AdamOptions adamw_defaults() {
  AdamOptions o;
  o.weight_decay = 0.01;
  return o;
}

void Adam::update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t t) {
  // The scalar factors in double, the per-element arithmetic in the parameter's type.
  const double bc1 = 1.0 - std::pow(opt_.beta1, double(t)), bc2 = 1.0 - std::pow(opt_.beta2, double(t));
  EMBER_DISPATCH_FLOAT(p.dtype(), "Adam", [&] {
    using T = scalar_t;
    T* pd = p.data<T>();
    const T* gd = g.data<T>();
    T* md = (*m_)[i].data<T>();
    T* vd = (*v_)[i].data<T>();
    const T b1 = T(opt_.beta1), b2 = T(opt_.beta2), eps = T(opt_.eps);
    const T step_size = T(lr_ / bc1), inv_sqrt_bc2 = T(1.0 / std::sqrt(bc2));
    const T l2 = decoupled_ ? T(0) : T(opt_.weight_decay);
    const T shrink = decoupled_ ? T(1.0 - lr_ * opt_.weight_decay) : T(1);
    for (int64_t k = 0, n = p.numel(); k < n; ++k) {
      T d = gd[k] + l2 * pd[k];
      md[k] = b1 * md[k] + (T(1) - b1) * d;
      vd[k] = b2 * vd[k] + (T(1) - b2) * d * d;
      pd[k] = pd[k] * shrink - step_size * md[k] / (std::sqrt(vd[k]) * inv_sqrt_bc2 + eps);
    }
  });
}

void Adam::update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t t) {
  const double bc1 = 1.0 - std::pow(opt_.beta1, double(t)), bc2 = 1.0 - std::pow(opt_.beta2, double(t));
  Tensor d = (!decoupled_ && opt_.weight_decay != 0) ? g + p * opt_.weight_decay : g;
  Tensor& m = (*m_)[i];
  Tensor& v = (*v_)[i];
  m.copy_(m * opt_.beta1 + d * (1 - opt_.beta1));
  v.copy_(v * opt_.beta2 + d * d * (1 - opt_.beta2));
  Tensor base = decoupled_ ? p * (1 - lr_ * opt_.weight_decay) : p;
  Tensor(p).copy_(base - (m * (lr_ / bc1)) / (sqrt(v) * (1 / std::sqrt(bc2)) + opt_.eps));
}

}  // namespace ember::optim
