// Adam (Kingma and Ba) and AdamW (Loshchilov and Hutter), as PyTorch computes them, step t from 1:
//   Adam:  g = grad + weight_decay * p               (L2 penalty folded into the gradient)
//   AdamW: p = p * (1 - lr * weight_decay)           (decoupled decay), g = grad
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#pragma once
#include "framework/train/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions opt);
  // Each group's weight_decay in place of opt.weight_decay.
  Adam(std::vector<ParamGroup> groups, AdamOptions opt);
  std::string kind() const override { return decoupled_ ? "adamw" : "adam"; }
  const AdamOptions& options() const { return opt_; }

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions opt, bool decoupled);
  void update_fused(size_t i, const Tensor& p, const Tensor& g, int64_t t) override;
  void update_ops(size_t i, const Tensor& p, const Tensor& g, int64_t t) override;

 private:
  AdamOptions opt_;
  bool decoupled_;
  std::vector<Tensor>* m_ = nullptr;  // "exp_avg"
  std::vector<Tensor>* v_ = nullptr;  // "exp_avg_sq"
};

// AdamW: Adam with decoupled weight decay (default 0.01, as PyTorch).
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions opt);
  AdamW(std::vector<ParamGroup> groups, AdamOptions opt);
};
AdamOptions adamw_defaults();  // AdamOptions with weight_decay = 0.01

}  // namespace ember::optim
