// Embedding lookup: rows of a table gathered by int64 ids.
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// weight: (V, D); ids: int64 of any shape with values in [0, V). Returns ids.shape + (D).
Tensor embedding(const Tensor& weight, const Tensor& ids);

// embedding's VJP as a primitive of its own: a (num_embeddings, D) tensor where row v is the sum
// of g's rows whose id is v (scatter-add). g has shape ids.shape + (D). Its own VJP is embedding.
Tensor embedding_backward(const Tensor& g, const Tensor& ids, int64_t num_embeddings);

}  // namespace ember
