// group_norm and rms_norm as compositions of differentiable ops: group_norm is layer_norm (without
// its affine part) over each (sample, group) row of a (N, groups, -1) view, then a per-channel
// affine map; rms_norm is a handful of elementwise ops and one mean.
#include "ops/norm/group_norm.h"

#include "ops/elementwise/elementwise.h"
#include "ops/norm/layer_norm.h"
#include "ops/reduce/reduce.h"

namespace ember {
namespace {

void check_param(const char* op, const char* what, const Tensor& t, int64_t size, const Tensor& x) {
  if (!t.defined()) return;
  EMBER_CHECK(t.shape() == Shape{size}, op, ": ", what, " has shape ", to_string(t.shape()), " but the input ",
              to_string(x.shape()), " needs ", to_string(Shape{size}));
  EMBER_CHECK(t.dtype() == x.dtype(), op, ": ", what, " is ", t.dtype(), " but the input is ", x.dtype());
  EMBER_CHECK(t.device() == x.device(), op, ": ", what, " is on ", t.device(), " but the input is on ", x.device());
}

void check_input(const char* op, const Tensor& x, double eps) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 input, got ", x.dtype(), " ",
              to_string(x.shape()));
  EMBER_CHECK(eps >= 0, op, ": eps must be >= 0, got ", eps);
}

}  // namespace

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  check_input("group_norm", x, eps);
  EMBER_CHECK(x.dim() >= 2, "group_norm: expected an input (N, C, ...) of at least 2 dims, got shape ",
              to_string(x.shape()));
  const int64_t c = x.size(1);
  EMBER_CHECK(groups > 0 && c % groups == 0, "group_norm: ", groups, " groups must be positive and divide the ", c,
              " channels of input ", to_string(x.shape()));
  EMBER_CHECK(x.numel() > 0, "group_norm: the input ", to_string(x.shape()), " is empty");
  check_param("group_norm", "weight", weight, c, x);
  check_param("group_norm", "bias", bias, c, x);
  Tensor y = layer_norm(x.reshape({x.size(0), groups, -1}), Tensor(), Tensor(), eps).reshape(x.shape());
  Shape cs(size_t(x.dim()), 1);
  cs[1] = c;
  if (weight.defined()) y = y * weight.reshape(cs);
  if (bias.defined()) y = y + bias.reshape(cs);
  return y;
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  check_input("rms_norm", x, eps);
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) > 0, "rms_norm: the input needs a non-empty last dim to normalise, got shape ",
              to_string(x.shape()));
  check_param("rms_norm", "weight", weight, x.size(-1), x);
  Tensor y = x * (1.0 / sqrt(mean(x * x, {-1}, true) + eps));
  return weight.defined() ? y * weight : y;
}

}  // namespace ember
