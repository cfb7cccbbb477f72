// Flatten: merges dims start_dim.. into one, as PyTorch's nn.Flatten (default start_dim 1 keeps
// the batch dim).
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1) : start_dim(start_dim) {}
  Tensor forward(const Tensor& x) override {
    EMBER_CHECK(x.defined() && start_dim >= 0 && start_dim < std::max<int64_t>(x.dim(), 1), "Flatten(", start_dim,
                "): the input ", x.defined() ? to_string(x.shape()) : std::string("undefined"), " has no dim ", start_dim);
    Shape s(x.shape().begin(), x.shape().begin() + start_dim);
    s.push_back(-1);
    return x.reshape(s);
  }
  std::string name() const override { return str("Flatten(", start_dim, ")"); }
  int64_t start_dim;
};

}  // namespace ember::nn
