// Gradient clipping by global norm: if the 2-norm of all gradients together exceeds max_norm,
// scales every gradient by max_norm / (norm + 1e-6). Returns the norm before clipping.
#pragma once
#include <vector>

#include "framework/core/tensor.h"

namespace ember::optim {

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);
double grad_norm(const std::vector<Tensor>& params);  // the global 2-norm, without clipping

}  // namespace ember::optim
