#include "framework/train/nn/embedding.h"

#include "framework/train/nn/init.h"
#include "ops/embedding/embedding.h"

namespace ember::nn {

Embedding::Embedding(int64_t n, int64_t d, Generator& gen, double stddev, DType dtype) : num_embeddings(n), dim(d) {
  EMBER_CHECK(n > 0 && d > 0, "Embedding: num_embeddings and dim must be positive, got ", n, " and ", d);
  Tensor w = empty({n, d}, dtype);
  init::normal_(w, 0.0, stddev, gen);
  weight = register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& ids) { return embedding(weight, ids); }

std::string Embedding::name() const { return str("Embedding(", num_embeddings, ", ", dim, ")"); }

}  // namespace ember::nn
