// CPU kernels of max_pool2d: the forward (values and the flat index into x of each maximum) and
// the scatter of an output cotangent to those indices.
#pragma once
#include "framework/core/tensor.h"
#include "ops/pool/pool_geometry.h"

namespace ember::cpu {

using ember::PoolGeometry;

// Returns the pooled values; *indices receives int64 indices into x.flatten(), shaped like the output.
Tensor max_pool2d(const PoolGeometry& g, const Tensor& x, Tensor* indices);
// dx (shape of x) with dx.flatten()[indices[i]] += dy[i].
Tensor max_pool2d_scatter(const PoolGeometry& g, const Tensor& dy, const Tensor& indices);

}  // namespace ember::cpu
