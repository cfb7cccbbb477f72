// Sequential: applies its layers in order. Layers are named "0", "1", ... as in PyTorch, so a
// parameter of the third layer is "2.weight".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "framework/train/nn/module.h"

namespace ember::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  template <class M>
  std::shared_ptr<M> add(std::shared_ptr<M> layer) {
    register_module(std::to_string(layers_.size()), layer);
    layers_.push_back(layer);
    return layer;
  }
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Sequential"; }

  size_t size() const { return layers_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const;
  std::string describe() const;  // one line per layer, with the parameter count

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

}  // namespace ember::nn
