// LayerNorm over the last dimension, with a learned scale (starting at 1) and shift (at 0).
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

// As PyTorch's nn.LayerNorm(dim, eps, elementwise_affine, bias): bias=false keeps the scale and
// drops the shift (nanoGPT's bias=False); without affine there is neither.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, bool affine = true, bool bias = true,
                     DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t dim;
  double eps;
  Tensor weight, bias;  // (dim) each; weight undefined when !affine, bias when !affine or !bias
};

}  // namespace ember::nn
