// Parameter groups, as PyTorch's param_groups: parameters that share a weight decay. A model is
// usually trained with two, its matrices decayed and its biases, norms' gains and other vectors
// not (GPT-2's and nanoGPT's recipe): decaying a gain towards zero fights the normalisation it scales.
#pragma once
#include <vector>

#include "framework/core/tensor.h"

namespace ember::optim {

struct ParamGroup {
  std::vector<Tensor> params;
  double weight_decay = 0.0;
};

// Two groups, in this order: every parameter with two or more dimensions (weights, embeddings)
// with `weight_decay`, then every other (biases, norm gains and shifts) with none. Either may be
// empty. Within a group the parameters keep their order in `params`.
std::vector<ParamGroup> decay_matrices_only(const std::vector<Tensor>& params, double weight_decay);

}  // namespace ember::optim
