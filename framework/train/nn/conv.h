// Conv2d: a 2-D convolution over NCHW inputs with weight (out, in / groups, kh, kw) and bias (out),
// as PyTorch's nn.Conv2d (so weights move between the two unchanged).
#pragma once
#include "framework/train/nn/module.h"
#include "ops/conv/conv.h"

namespace ember::nn {

class Conv2d : public Module {
 public:
  // PyTorch's default initialisation: weight and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
  // fan_in = in / groups * kh * kw.
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel, Generator& gen,
         const ember::Conv2dOptions& opt = {}, bool bias = true, DType dtype = DType::Float32);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  int64_t in_channels, out_channels;
  std::array<int64_t, 2> kernel;
  ember::Conv2dOptions conv;
  Tensor weight, bias;  // bias undefined without bias
};

}  // namespace ember::nn
