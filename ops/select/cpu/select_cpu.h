// CPU kernels of the select family (raw: no checks beyond the contract, nothing recorded).
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"
#include "ops/select/select.h"

namespace ember::cpu {

// x: contiguous float (rows, n), 0 < k <= n. Each row's k first entries in the order of
// ops/select/order_key.h: values (rows, k) of x's dtype and int64 indices (rows, k).
TopK topk_rows(const Tensor& x, int64_t k, bool largest);

// Inclusive cumulative sum along dim (0 <= dim < x.dim()) of a float tensor with any strides,
// from the end of the dim when `reverse`. The result is contiguous with x's shape.
Tensor scan(const Tensor& x, int64_t dim, bool reverse);

}  // namespace ember::cpu
