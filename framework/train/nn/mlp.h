// An MLP builder: Linear layers of the given sizes with an activation (and optional dropout)
// between them, none after the last layer (it produces logits).
#pragma once
#include <memory>
#include <vector>

#include "framework/train/nn/activation.h"
#include "framework/train/nn/linear.h"
#include "framework/train/nn/sequential.h"

namespace ember::nn {

struct MLPOptions {
  Activation activation = Activation::ReLU;
  double dropout = 0.0;  // after each hidden activation; 0 adds no Dropout layer
  Init init = Init::KaimingUniform;
  DType dtype = DType::Float32;
  uint64_t seed = 0;  // weights and dropout masks both derive from it
};

// sizes = {in, hidden..., out}, at least two entries. {784, 256, 128, 10} gives
// Linear(784,256) ReLU Linear(256,128) ReLU Linear(128,10), parameters "0.weight", "2.weight", "4.weight".
std::shared_ptr<Sequential> make_mlp(const std::vector<int64_t>& sizes, const MLPOptions& opt = {});

}  // namespace ember::nn
