// Dropout: active in training mode only; its own seeded generator makes runs repeat exactly.
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p, uint64_t seed = 0xd809);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

  double p;
  Generator gen;
};

}  // namespace ember::nn
