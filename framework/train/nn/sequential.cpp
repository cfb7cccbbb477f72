#include "framework/train/nn/sequential.h"

namespace ember::nn {

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (auto& layer : layers_) h = layer->forward(h);
  return h;
}

const std::shared_ptr<Module>& Sequential::operator[](size_t i) const {
  EMBER_CHECK(i < layers_.size(), "Sequential: index ", i, " out of range for ", layers_.size(), " layers");
  return layers_[i];
}

std::string Sequential::describe() const {
  std::string s = "Sequential(\n";
  for (size_t i = 0; i < layers_.size(); ++i)
    s += str("  (", i, ") ", layers_[i]->name(), layers_[i]->num_parameters() ? str("  [", layers_[i]->num_parameters(), " params]") : "", "\n");
  return s + str(")  ", num_parameters(), " parameters");
}

}  // namespace ember::nn
