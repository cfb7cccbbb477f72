#include "framework/train/nn/group_norm.h"

#include "ops/norm/group_norm.h"

namespace ember::nn {

GroupNorm::GroupNorm(int64_t g, int64_t c, double e, bool affine, DType dtype) : groups(g), channels(c), eps(e) {
  EMBER_CHECK(g > 0 && c > 0 && c % g == 0, "GroupNorm: groups (", g, ") must be positive and divide channels (", c, ")");
  EMBER_CHECK(e > 0, "GroupNorm: eps must be positive, got ", e);
  if (affine) {
    weight = register_parameter("weight", ones({c}, dtype));
    bias = register_parameter("bias", zeros({c}, dtype));
  }
}

Tensor GroupNorm::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() >= 2 && x.size(1) == channels, name(), ": expected input of shape (N, ", channels,
              ", ...), got ", x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return group_norm(x, groups, weight, bias, eps);
}

std::string GroupNorm::name() const { return str("GroupNorm(", groups, ", ", channels, ", eps=", eps, ")"); }

RMSNorm::RMSNorm(int64_t d, double e, bool affine, DType dtype) : dim(d), eps(e) {
  EMBER_CHECK(d > 0, "RMSNorm: dim must be positive, got ", d);
  EMBER_CHECK(e > 0, "RMSNorm: eps must be positive, got ", e);
  if (affine) weight = register_parameter("weight", ones({d}, dtype));
}

Tensor RMSNorm::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == dim, "RMSNorm(", dim, "): expected input of shape (..., ", dim,
              "), got ", x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return rms_norm(x, weight, eps);
}

std::string RMSNorm::name() const { return str("RMSNorm(", dim, ", eps=", eps, ")"); }

}  // namespace ember::nn
