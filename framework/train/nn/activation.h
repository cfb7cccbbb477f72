// Parameter-free activation layers, so that Sequential can hold them.
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

enum class Activation { ReLU, GELU, Tanh, Sigmoid };
Activation parse_activation(const std::string& s);  // "relu", "gelu", "tanh", "sigmoid"
const char* name(Activation a);
Tensor apply(Activation a, const Tensor& x);

class ActivationLayer : public Module {
 public:
  explicit ActivationLayer(Activation a) : kind(a) {}
  Tensor forward(const Tensor& x) override { return apply(kind, x); }
  std::string name() const override;
  Activation kind;
};

}  // namespace ember::nn
