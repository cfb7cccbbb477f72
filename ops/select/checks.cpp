#include "ops/select/checks.h"

namespace ember::select {

void check_input(const char* op, const Tensor& x) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 tensor, got ", x.dtype(), to_string(x.shape()),
              " (convert with .to(DType::Float32))");
  EMBER_CHECK(x.dim() >= 1, op, ": expected a tensor with at least one dimension, got a 0-d ", x.dtype(),
              " tensor (reshape it to {1})");
}

int64_t normalize_dim(const char* op, const Tensor& x, int64_t dim) {
  int64_t nd = x.dim();
  EMBER_CHECK(dim >= -nd && dim < nd, op, ": dim ", dim, " is out of range for a tensor of shape ", to_string(x.shape()),
              " (expected ", -nd, " to ", nd - 1, ")");
  return dim < 0 ? dim + nd : dim;
}

}  // namespace ember::select
