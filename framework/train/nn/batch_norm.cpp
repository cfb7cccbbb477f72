#include "framework/train/nn/batch_norm.h"

#include "ops/norm/batch_norm.h"

namespace ember::nn {

BatchNorm2d::BatchNorm2d(int64_t c, double e, double m, bool affine, DType dtype) : channels(c), eps(e), momentum(m) {
  EMBER_CHECK(c > 0, "BatchNorm2d: channels must be positive, got ", c);
  EMBER_CHECK(e > 0, "BatchNorm2d: eps must be positive, got ", e);
  EMBER_CHECK(m >= 0 && m <= 1, "BatchNorm2d: momentum must be in [0, 1], got ", m);
  if (affine) {
    weight = register_parameter("weight", ones({c}, dtype));
    bias = register_parameter("bias", zeros({c}, dtype));
  }
  running_mean = register_buffer("running_mean", zeros({c}, dtype));
  running_var = register_buffer("running_var", ones({c}, dtype));
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() == 4 && x.size(1) == channels, "BatchNorm2d(", channels,
              "): expected input of shape (N, ", channels, ", H, W), got ",
              x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum, eps);
}

std::string BatchNorm2d::name() const { return str("BatchNorm2d(", channels, ", eps=", eps, ", momentum=", momentum, ")"); }

}  // namespace ember::nn
