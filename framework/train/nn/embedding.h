// Embedding: a (num_embeddings, dim) table whose rows are looked up by int64 ids.
#pragma once
#include "framework/train/nn/module.h"

namespace ember::nn {

class Embedding : public Module {
 public:
  // Rows start N(0, stddev^2) (PyTorch uses 1; GPT-2 uses 0.02).
  Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, double stddev = 1.0, DType dtype = DType::Float32);
  Tensor forward(const Tensor& ids) override;  // ids.shape -> ids.shape + (dim)
  std::string name() const override;

  int64_t num_embeddings, dim;
  Tensor weight;
};

}  // namespace ember::nn
