// MaxPool2d: the parameter-free layer around max_pool2d (stride {0, 0}: the kernel size).
#pragma once
#include "framework/train/nn/module.h"
#include "ops/pool/pool.h"

namespace ember::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0});
  Tensor forward(const Tensor& x) override { return max_pool2d(x, kernel, stride, padding); }
  std::string name() const override;

  Pair kernel, stride, padding;
};

}  // namespace ember::nn
