// CUDA kernels of embedding (a gather of table rows) and embedding_backward (its transpose, a
// scatter-add), with the CPU kernels' contract (ops/embedding/embedding.cpp): int64 ids on the
// GPU, each checked to lie in [0, V) (a bad id raises ember::Error naming it, as on the CPU).
// The scatter-add uses atomicAdd, so with repeated ids the float summation order, and hence the
// last bits of the gradient, may vary from run to run (the CPU's does not).
#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
__global__ void gather_rows(const T* w, int64_t sv, int64_t sd, const int64_t* ids, T* out, int64_t n, int64_t d,
                            int64_t v, unsigned long long* bad) {
  int64_t total = n * d;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = e / d, k = e % d, id = ids[i];
    if (id < 0 || id >= v) {
      BadIndex::report(bad, i);
      continue;
    }
    out[e] = w[id * sv + k * sd];
  }
}

template <class T>
__global__ void scatter_add_rows(const T* g, const int64_t* ids, T* out, int64_t n, int64_t d, int64_t v,
                                 unsigned long long* bad) {
  int64_t total = n * d;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = e / d, k = e % d, id = ids[i];
    if (id < 0 || id >= v) {
      BadIndex::report(bad, i);
      continue;
    }
    atomicAdd(out + id * d + k, g[e]);
  }
}

void raise_bad_id(const BadIndex& bad, const Tensor& ids, int64_t v, const char* op) {
  int64_t i = bad.first();
  if (i < 0) return;
  int64_t id = int64_t(ids.reshape({ids.numel()}).slice(0, i, i + 1).to(Device::CPU).item());
  throw Error(str(op, ": id ", id, " at flat index ", i, " is out of range for a table of ", v, " rows (expected 0 to ",
                  v - 1, ")"));
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& ids_in) {
  EMBER_CHECK(weight.device() == Device::CUDA && ids_in.device() == Device::CUDA, "embedding: expected cuda tensors");
  Tensor ids = ids_in.contiguous();
  int64_t v = weight.size(0), d = weight.size(1), n = ids.numel();
  Shape os = ids.shape();
  os.push_back(d);
  Tensor out = empty(os, weight.dtype(), Device::CUDA);
  if (n == 0) return out;
  BadIndex bad;
  EMBER_DISPATCH_FLOAT(weight.dtype(), "embedding", [&] {
    const scalar_t* w = static_cast<const scalar_t*>(weight.impl()->storage->data()) + weight.offset();
    gather_rows<scalar_t><<<blocks_for(n * std::max<int64_t>(d, 1)), kThreads>>>(
        w, weight.strides()[0], weight.strides()[1], ids.data<int64_t>(), out.data<scalar_t>(), n, d, v, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_id(bad, ids, v, "embedding");
  return out;
}

Tensor embedding_backward(const Tensor& g_in, const Tensor& ids_in, int64_t num_embeddings) {
  EMBER_CHECK(g_in.device() == Device::CUDA && ids_in.device() == Device::CUDA,
              "embedding_backward: expected cuda tensors");
  Tensor g = g_in.contiguous(), ids = ids_in.contiguous();
  int64_t d = g.size(-1), n = ids.numel();
  Tensor out = empty({num_embeddings, d}, g.dtype(), Device::CUDA);
  if (out.numel() > 0)
    EMBER_CUDA_CHECK(cudaMemsetAsync(out.raw_data(), 0, size_t(out.numel()) * itemsize(g.dtype()), nullptr));
  if (n == 0 || d == 0) return out;
  BadIndex bad;
  EMBER_DISPATCH_FLOAT(g.dtype(), "embedding_backward", [&] {
    scatter_add_rows<scalar_t><<<blocks_for(n * d), kThreads>>>(g.data<scalar_t>(), ids.data<int64_t>(),
                                                                out.data<scalar_t>(), n, d, num_embeddings, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_id(bad, ids, num_embeddings, "embedding_backward");
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::embedding.set(&embedding);
  cuda_kernels::embedding_backward.set(&embedding_backward);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
