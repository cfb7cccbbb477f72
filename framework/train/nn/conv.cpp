#include "framework/train/nn/conv.h"

#include <cmath>

#include "framework/train/nn/init.h"

namespace ember::nn {

Conv2d::Conv2d(int64_t in, int64_t out, std::array<int64_t, 2> k, Generator& gen, const ember::Conv2dOptions& opt,
               bool with_bias, DType dtype)
    : in_channels(in), out_channels(out), kernel(k), conv(opt) {
  EMBER_CHECK(in > 0 && out > 0, "Conv2d: in_channels and out_channels must be positive, got ", in, " and ", out);
  EMBER_CHECK(k[0] > 0 && k[1] > 0, "Conv2d: the kernel size must be positive, got [", k[0], ", ", k[1], "]");
  EMBER_CHECK(opt.groups > 0 && in % opt.groups == 0 && out % opt.groups == 0, "Conv2d: groups (", opt.groups,
              ") must be positive and divide in_channels (", in, ") and out_channels (", out, ")");
  EMBER_CHECK(is_floating(dtype), "Conv2d: dtype must be float32 or float64, got ", dtype);
  const double bound = 1.0 / std::sqrt(double(in / opt.groups * k[0] * k[1]));
  Tensor w = empty({out, in / opt.groups, k[0], k[1]}, dtype);
  init::uniform_(w, -bound, bound, gen);
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = empty({out}, dtype);
    init::uniform_(b, -bound, bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() == 4 && x.size(1) == in_channels, name(), ": expected input of shape (N, ",
              in_channels, ", H, W), got ", x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return conv2d(x, weight, bias, conv);
}

std::string Conv2d::name() const {
  return str("Conv2d(", in_channels, ", ", out_channels, ", kernel=", kernel[0], "x", kernel[1], ", stride=", conv.stride[0],
             "x", conv.stride[1], ", padding=", conv.padding[0], "x", conv.padding[1],
             conv.groups > 1 ? str(", groups=", conv.groups) : std::string(), bias.defined() ? "" : ", bias=false", ")");
}

}  // namespace ember::nn
