// The two ops the engine itself applies: summing cotangents (and tangents) where a value fans
// out, and copying a gradient into a leaf's .grad. They must be the recorded ops, so that a
// backward pass can itself be differentiated; the ops layer fills these hooks when it loads
// (ops/engine_ops.cpp), which keeps the core free of ops.
#pragma once
#include "framework/core/backend_hook.h"
#include "framework/core/tensor.h"

namespace ember::autograd::engine_ops {

extern BackendHook<Tensor(const Tensor& a, const Tensor& b)> add;
extern BackendHook<Tensor(const Tensor& x)> clone;

}  // namespace ember::autograd::engine_ops
