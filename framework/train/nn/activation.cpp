#include "framework/train/nn/activation.h"

#include "ops/elementwise/elementwise.h"

namespace ember::nn {

Activation parse_activation(const std::string& s) {
  if (s == "relu") return Activation::ReLU;
  if (s == "gelu") return Activation::GELU;
  if (s == "tanh") return Activation::Tanh;
  if (s == "sigmoid") return Activation::Sigmoid;
  throw Error(str("unknown activation '", s, "' (expected relu, gelu, tanh or sigmoid)"));
}

const char* name(Activation a) {
  switch (a) {
    case Activation::ReLU: return "relu";
    case Activation::GELU: return "gelu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
  }
  return "?";
}

Tensor apply(Activation a, const Tensor& x) {
  switch (a) {
    case Activation::ReLU: return relu(x);
    case Activation::GELU: return gelu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::Sigmoid: return sigmoid(x);
  }
  throw Error("activation: unknown kind");
}

std::string ActivationLayer::name() const {
  switch (kind) {
    case Activation::ReLU: return "ReLU";
    case Activation::GELU: return "GELU";
    case Activation::Tanh: return "Tanh";
    case Activation::Sigmoid: return "Sigmoid";
  }
  return "?";
}

}  // namespace ember::nn
