// BatchNorm2d: batch normalisation of (N, C, H, W) inputs over N, H and W, with a learned scale
// (starting at 1) and shift (at 0), and running statistics (buffers running_mean at 0,
// running_var at 1, saved in the state) updated in training mode and used in evaluation mode.
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t channels, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t channels;
  double eps, momentum;
  Tensor weight, bias;               // (C) each; undefined when !affine
  Tensor running_mean, running_var;  // (C) each
};

}  // namespace ember::nn
