// LayerNorm over the last dimension, with a learned scale (starting at 1) and shift (at 0).
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, bool affine = true, DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t dim;
  double eps;
  Tensor weight, bias;  // (dim) each; undefined when !affine
};

}  // namespace ember::nn
