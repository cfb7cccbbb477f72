// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as PyTorch's:
//   g = grad + weight_decay * p
//   buf = momentum * buf + g                      (buf starts at zero, so the first buf is g)
//   p -= lr * (nesterov ? g + momentum * buf : buf)      (p -= lr * g without momentum)
#pragma once
#include "framework/train/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions opt);
  SGD(std::vector<ParamGroup> groups, SGDOptions opt);  // each group's weight_decay in place of opt's
  std::string kind() const override { return "sgd"; }
  const SGDOptions& options() const { return opt_; }

 protected:
  void update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t t) override;
  void update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t t) override;

 private:
  SGDOptions opt_;
  std::vector<Tensor>* momentum_ = nullptr;  // "momentum_buffer", only when momentum > 0
};

}  // namespace ember::optim
