#include "framework/train/optim/adam.h"

#include <cmath>

#include "framework/train/optim/adam_kernel.h"
#include "ops/elementwise/elementwise.h"

namespace ember::optim {

Adam::Adam(std::vector<Tensor> params, AdamOptions opt)
    : Adam(std::vector<ParamGroup>{{std::move(params), opt.weight_decay}}, opt, false) {}
Adam::Adam(std::vector<ParamGroup> groups, AdamOptions opt) : Adam(std::move(groups), opt, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions opt, bool decoupled)
    : Optimizer(std::move(groups), opt.lr), opt_(opt), decoupled_(decoupled) {
  const char* who = decoupled ? "AdamW" : "Adam";
  EMBER_CHECK(opt.beta1 >= 0 && opt.beta1 < 1 && opt.beta2 >= 0 && opt.beta2 < 1, who,
              ": betas must be in [0, 1), got (", opt.beta1, ", ", opt.beta2, ")");
  EMBER_CHECK(opt.eps > 0, who, ": eps must be > 0, got ", opt.eps);
  m_ = &add_buffer("exp_avg");
  v_ = &add_buffer("exp_avg_sq");
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions opt)
    : Adam(std::vector<ParamGroup>{{std::move(params), opt.weight_decay}}, opt, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions opt) : Adam(std::move(groups), opt, true) {}

AdamOptions adamw_defaults() {
  AdamOptions o;
  o.weight_decay = 0.01;
  return o;
}

void Adam::update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t t) {
  // The scalar factors in double, the per-element arithmetic in the parameter's type.
  const double bc1 = 1.0 - std::pow(opt_.beta1, double(t)), bc2 = 1.0 - std::pow(opt_.beta2, double(t));
  const double wd = weight_decay(i);
  EMBER_DISPATCH_FLOAT(p.dtype(), "Adam", [&] {
    using T = scalar_t;
    AdamScalars<T> s{T(opt_.beta1),
                     T(opt_.beta2),
                     T(opt_.eps),
                     T(lr_ / bc1),
                     T(1.0 / std::sqrt(bc2)),
                     decoupled_ ? T(0) : T(wd),
                     decoupled_ ? T(1.0 - lr_ * wd) : T(1)};
    adam_update(p.data<T>(), g.data<T>(), (*m_)[i].data<T>(), (*v_)[i].data<T>(), p.numel(), s);
  });
}

void Adam::update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t t) {
  const double bc1 = 1.0 - std::pow(opt_.beta1, double(t)), bc2 = 1.0 - std::pow(opt_.beta2, double(t));
  const double wd = weight_decay(i);
  Tensor d = (!decoupled_ && wd != 0) ? g + p * wd : g;
  Tensor& m = (*m_)[i];
  Tensor& v = (*v_)[i];
  m.copy_(m * opt_.beta1 + d * (1 - opt_.beta1));
  v.copy_(v * opt_.beta2 + d * d * (1 - opt_.beta2));
  Tensor base = decoupled_ ? p * (1 - lr_ * wd) : p;
  Tensor(p).copy_(base - (m * (lr_ / bc1)) / (sqrt(v) * (1 / std::sqrt(bc2)) + opt_.eps));
}

}  // namespace ember::optim
