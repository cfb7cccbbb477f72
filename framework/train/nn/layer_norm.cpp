#include "framework/train/nn/layer_norm.h"

#include "ops/norm/layer_norm.h"

namespace ember::nn {

LayerNorm::LayerNorm(int64_t d, double e, bool affine, DType dtype) : dim(d), eps(e) {
  EMBER_CHECK(d > 0, "LayerNorm: dim must be positive, got ", d);
  EMBER_CHECK(e > 0, "LayerNorm: eps must be positive, got ", e);
  if (affine) {
    weight = register_parameter("weight", ones({d}, dtype));
    bias = register_parameter("bias", zeros({d}, dtype));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == dim, "LayerNorm(", dim, "): expected input of shape (..., ",
              dim, "), got ", x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return layer_norm(x, weight, bias, eps);
}

std::string LayerNorm::name() const { return str("LayerNorm(", dim, ", eps=", eps, ")"); }

}  // namespace ember::nn
