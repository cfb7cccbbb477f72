// Linear: y = x W^T + b, with W of shape (out, in) as in PyTorch (so weights move between the two
// unchanged). x may have any leading dims: (..., in) -> (..., out).
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

enum class Init {
  Default,        // PyTorch's: W and b from U(-1/sqrt(in), 1/sqrt(in))
  KaimingUniform, // He, for ReLU layers: W from U(-sqrt(6/in), sqrt(6/in)), b = 0
  XavierUniform,  // Glorot, for tanh / linear layers: W from U(+-sqrt(6/(in+out))), b = 0
};
Init parse_init(const std::string& s);  // "default", "kaiming", "xavier"
const char* name(Init init);

struct LinearOptions {
  bool bias = true;
  Init init = Init::Default;
  DType dtype = DType::Float32;
};

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& gen, LinearOptions opt = {});
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t in_features, out_features;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out), undefined without bias
};

}  // namespace ember::nn
