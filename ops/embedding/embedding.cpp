// embedding and embedding_backward: checks, dispatch, and their rules. Both are linear, and each
// is the other's transpose: embedding's VJP (w.r.t. the table) is embedding_backward, whose VJP
// (w.r.t. g) is embedding again, so gradients of gradients stay within these two primitives.
#include "ops/embedding/embedding.h"

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/embedding/cpu/embedding_kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

void check_ids(const char* op, const Tensor& ids, const Tensor& other) {
  EMBER_CHECK(ids.defined(), op, ": ids are undefined");
  EMBER_CHECK(ids.dtype() == DType::Int64, op, ": ids must be int64, got ", ids.dtype(), to_string(ids.shape()));
  EMBER_CHECK(ids.device() == other.device(), op, ": ids are on ", ids.device(), " but the table on ", other.device());
}

Tensor embedding_kernel(const Tensor& weight, const Tensor& ids) {
  if (weight.device() == Device::CUDA) return cuda_kernels::embedding(weight, ids);
  check_cpu(weight, "embedding");
  return cpu::embedding(weight, ids);
}

Tensor embedding_backward_kernel(const Tensor& g, const Tensor& ids, int64_t v) {
  if (g.device() == Device::CUDA) return cuda_kernels::embedding_backward(g, ids, v);
  check_cpu(g, "embedding_backward");
  return cpu::embedding_backward(g, ids, v);
}

// Input 1 (the ids) carries no gradient in either primitive.
struct EmbeddingBackwardAttrs {
  int64_t num_embeddings;
};

struct EmbeddingPrims {
  Primitive<> embedding =
      Primitive<>("embedding")
          .all_devices([](const Args& a, const NoAttrs&) { return embedding_kernel(a[0], a[1]); })
          .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
          .saves({1}, false)
          .vjp([](const Tensor& g, const OpCall<>& c) {
            return Grads{ember::embedding_backward(g, c.in[1], c.in_shape(0)[0]), Tensor()};
          })
          .jvp([](const Args& t, const OpCall<>& c) { return ember::embedding(t[0], c.in[1]); });
  Primitive<EmbeddingBackwardAttrs> embedding_backward =
      Primitive<EmbeddingBackwardAttrs>("embedding_backward")
          .all_devices([](const Args& a, const EmbeddingBackwardAttrs& at) {
            return embedding_backward_kernel(a[0], a[1], at.num_embeddings);
          })
          .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
          .saves({1}, false)
          .vjp([](const Tensor& gg, const OpCall<EmbeddingBackwardAttrs>& c) {
            return Grads{ember::embedding(gg, c.in[1]), Tensor()};
          })
          .jvp([](const Args& t, const OpCall<EmbeddingBackwardAttrs>& c) {
            return ember::embedding_backward(t[0], c.in[1], c.attrs.num_embeddings);
          });
};

const EmbeddingPrims& prims() {
  static const EmbeddingPrims p;
  return p;
}

}  // namespace

void declare_embedding_ops() { prims(); }

Tensor embedding(const Tensor& weight, const Tensor& ids_in) {
  EMBER_CHECK(weight.defined(), "embedding: weight is undefined");
  EMBER_CHECK(is_floating(weight.dtype()) && weight.dim() == 2, "embedding: weight must be a 2-d float tensor (V, D), got ",
              weight.dtype(), to_string(weight.shape()));
  check_ids("embedding", ids_in, weight);
  return prims().embedding({weight, ids_in.detach()});
}

Tensor embedding_backward(const Tensor& g, const Tensor& ids_in, int64_t num_embeddings) {
  EMBER_CHECK(g.defined(), "embedding_backward: g is undefined");
  EMBER_CHECK(is_floating(g.dtype()), "embedding_backward: g must be float, got ", g.dtype());
  check_ids("embedding_backward", ids_in, g);
  Shape want = ids_in.shape();
  want.push_back(g.dim() > 0 ? g.size(-1) : 0);
  EMBER_CHECK(g.dim() == ids_in.dim() + 1 && g.shape() == want, "embedding_backward: g has shape ",
              to_string(g.shape()), " but ids of shape ", to_string(ids_in.shape()), " need ids.shape + (D)");
  EMBER_CHECK(num_embeddings >= 0, "embedding_backward: num_embeddings must be >= 0, got ", num_embeddings);
  return prims().embedding_backward({g, ids_in.detach()}, EmbeddingBackwardAttrs{num_embeddings});
}

}  // namespace ember
