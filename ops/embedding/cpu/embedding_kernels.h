// CPU kernels of embedding: a gather of table rows and its transpose, a scatter-add. Threads
// split the ids for the gather and the D columns for the scatter, so no two threads add into
// the same element and the result does not depend on the thread count.
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// Throws naming `op` unless every id lies in [0, num_embeddings); returns the ids contiguous.
Tensor checked_ids(const Tensor& ids, int64_t num_embeddings, const char* op);

Tensor embedding(const Tensor& weight, const Tensor& ids);  // weight (V, D) any strides
Tensor embedding_backward(const Tensor& g, const Tensor& ids, int64_t num_embeddings);

}  // namespace ember::cpu
