// Argument checks shared by the select family's entry points.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember::select {

// x must be defined, float32/float64 and at least 1-d; names `op` and x's dtype and shape.
void check_input(const char* op, const Tensor& x);
// dim in [-x.dim(), x.dim()); returns it made non-negative.
int64_t normalize_dim(const char* op, const Tensor& x, int64_t dim);

}  // namespace ember::select
