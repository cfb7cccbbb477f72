#include "framework/train/nn/layer_norm.h"

#include "ops/norm/layer_norm.h"

namespace ember::nn {

LayerNorm::LayerNorm(int64_t d, double e, bool affine, bool with_bias, DType dtype) : dim(d), eps(e) {
  EMBER_CHECK(d > 0, "LayerNorm: dim must be positive, got ", d);
  EMBER_CHECK(e > 0, "LayerNorm: eps must be positive, got ", e);
  if (affine) {
    weight = register_parameter("weight", ones({d}, dtype));
    // Without a bias the op gets an undefined one (a shift of 0), not a tensor of zeros per call.
    if (with_bias) bias = register_parameter("bias", zeros({d}, dtype));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == dim, "LayerNorm(", dim, "): expected input of shape (..., ",
              dim, "), got ", x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return layer_norm(x, weight, bias, eps);
}

std::string LayerNorm::name() const {
  return str("LayerNorm(", dim, ", eps=", eps, weight.defined() && !bias.defined() ? ", bias=false" : "", ")");
}

}  // namespace ember::nn
