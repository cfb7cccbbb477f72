#include "framework/train/optim/param_group.h"

namespace ember::optim {

std::vector<ParamGroup> decay_matrices_only(const std::vector<Tensor>& params, double weight_decay) {
  std::vector<ParamGroup> groups{{{}, weight_decay}, {{}, 0.0}};
  for (const Tensor& p : params) groups[p.dim() >= 2 ? 0 : 1].params.push_back(p);
  return groups;
}

}  // namespace ember::optim
