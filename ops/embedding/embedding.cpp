// embedding and embedding_backward: checks, dispatch, and their rules. Both are linear, and each
// is the other's transpose: embedding's VJP (w.r.t. the table) is embedding_backward, whose VJP
// (w.r.t. g) is embedding again, so gradients of gradients stay within these two primitives.
#include "ops/embedding/embedding.h"

#include "framework/autograd/trace.h"
#include "ops/embedding/cpu/embedding_kernels.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
Tensor embedding(const Tensor& weight, const Tensor& ids);  // ops/embedding/cuda/embedding.cu
Tensor embedding_backward(const Tensor& g, const Tensor& ids, int64_t num_embeddings);
}  // namespace cuda
#endif

namespace {

void check_ids(const char* op, const Tensor& ids, const Tensor& other) {
  EMBER_CHECK(ids.defined(), op, ": ids are undefined");
  EMBER_CHECK(ids.dtype() == DType::Int64, op, ": ids must be int64, got ", ids.dtype(), to_string(ids.shape()));
  EMBER_CHECK(ids.device() == other.device(), op, ": ids are on ", ids.device(), " but the table on ", other.device());
}

Tensor embedding_kernel(const Tensor& weight, const Tensor& ids) {
#ifdef EMBER_CUDA
  if (weight.device() == Device::CUDA) return cuda::embedding(weight, ids);
#endif
  check_cpu(weight, "embedding");
  return cpu::embedding(weight, ids);
}

Tensor embedding_backward_kernel(const Tensor& g, const Tensor& ids, int64_t v) {
#ifdef EMBER_CUDA
  if (g.device() == Device::CUDA) return cuda::embedding_backward(g, ids, v);
#endif
  check_cpu(g, "embedding_backward");
  return cpu::embedding_backward(g, ids, v);
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& ids_in) {
  EMBER_CHECK(weight.defined(), "embedding: weight is undefined");
  EMBER_CHECK(is_floating(weight.dtype()) && weight.dim() == 2, "embedding: weight must be a 2-d float tensor (V, D), got ",
              weight.dtype(), to_string(weight.shape()));
  check_ids("embedding", ids_in, weight);
  Tensor ids = ids_in.detach();
  int64_t v = weight.size(0);
  auto r = autograd::record(
      "embedding", {weight}, [&](const autograd::Args& a) { return embedding(a[0], ids); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [ids, v](const Tensor& g, int) { return embedding_backward(g, ids, v); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) { return embedding(t[0], ids); });
  return r ? *r : embedding_kernel(weight, ids);
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
  Tensor ids = ids_in.detach();
  auto r = autograd::record(
      "embedding_backward", {g},
      [&](const autograd::Args& a) { return embedding_backward(a[0], ids, num_embeddings); },
      [&](const Tensor&, const autograd::Args&) -> autograd::VjpFn {
        return [ids](const Tensor& gg, int) { return embedding(gg, ids); };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args&) {
        return embedding_backward(t[0], ids, num_embeddings);
      });
  return r ? *r : embedding_backward_kernel(g, ids, num_embeddings);
}

}  // namespace ember
