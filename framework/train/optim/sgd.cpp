#include "framework/train/optim/sgd.h"

#include <cmath>

#include "ops/elementwise/elementwise.h"

namespace ember::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions opt)
    : SGD(std::vector<ParamGroup>{{std::move(params), opt.weight_decay}}, opt) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions opt) : Optimizer(std::move(groups), opt.lr), opt_(opt) {
  EMBER_CHECK(opt.momentum >= 0 && opt.momentum < 1, "SGD: momentum must be in [0, 1), got ", opt.momentum);
  EMBER_CHECK(!opt.nesterov || opt.momentum > 0, "SGD: Nesterov momentum needs momentum > 0");
  if (opt.momentum > 0) momentum_ = &add_buffer("momentum_buffer");
}

void SGD::update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t) {
  EMBER_DISPATCH_FLOAT(p.dtype(), "SGD", [&] {
    using T = scalar_t;
    T* pd = p.data<T>();
    const T* gd = g.data<T>();
    T* bd = momentum_ ? (*momentum_)[i].data<T>() : nullptr;
    const T lr = T(lr_), wd = T(weight_decay(i)), mu = T(opt_.momentum);
    const bool nesterov = opt_.nesterov;
    for (int64_t k = 0, n = p.numel(); k < n; ++k) {
      T d = gd[k] + wd * pd[k];
      if (bd) {
        bd[k] = mu * bd[k] + d;
        d = nesterov ? d + mu * bd[k] : bd[k];
      }
      pd[k] -= lr * d;
    }
  });
}

void SGD::update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t) {
  const double wd = weight_decay(i);
  Tensor d = wd != 0 ? g + p * wd : g;
  if (momentum_) {
    Tensor& buf = (*momentum_)[i];
    buf.copy_(buf * opt_.momentum + d);
    d = opt_.nesterov ? d + buf * opt_.momentum : buf;
  }
  Tensor(p).copy_(p - d * lr_);
}

}  // namespace ember::optim
