// GroupNorm (Wu and He) over (N, C, ...) inputs and RMSNorm over the last dim, with learned
// per-channel (resp. per-feature) scales starting at 1 (and GroupNorm's shift at 0).
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class GroupNorm : public Module {
 public:
  GroupNorm(int64_t groups, int64_t channels, double eps = 1e-5, bool affine = true, DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t groups, channels;
  double eps;
  Tensor weight, bias;  // (C) each; undefined when !affine
};

class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool affine = true, DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t dim;
  double eps;
  Tensor weight;  // (dim); undefined when !affine
};

}  // namespace ember::nn
