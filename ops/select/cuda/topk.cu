// CUDA top-k (and sort, which is top-k with k = n) over contiguous rows, with Thrust.
//
// A segmented sort done as two stable radix sorts of one permutation of flat positions:
//   1. by the order key of the value (ops/select/order_key.h: integer keys, so Thrust picks its
//      radix sort; complemented keys give descending order);
//   2. by row (position / n), stably, which groups the rows again while keeping pass 1's order
//      inside each row.
// Both passes are stable and the permutation starts in increasing order, so equal values keep
// the lower index first, as on the CPU. A gather kernel then takes each row's first k.
// One row needs no second pass. The cost is O(rows * n) whatever k is: a full sort, chosen for
// simplicity and because Thrust has no segmented top-k; small k on long rows would prefer a
// radix select (as models/sparsity/topk.cpp does on the CPU).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "framework/cuda/indexing.cuh"
#include "ops/select/cuda/thrust_policy.cuh"
#include "ops/select/order_key.h"
#include "ops/select/select.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T, class K>
__global__ void make_keys(const T* x, K* keys, int64_t total, bool largest) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    keys[i] = select::order_key(x[i], largest);
}

struct RowOf {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t pos) const { return pos / n; }
};

// Row r's first k sorted positions -> values and indices within the row.
template <class T>
__global__ void take_first_k(const T* x, const int64_t* perm, T* vals, int64_t* idx, int64_t rows, int64_t n,
                             int64_t k) {
  int64_t total = rows * k;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = o / k, j = o % k, p = perm[r * n + j];
    vals[o] = x[p];
    idx[o] = p - r * n;
  }
}

template <class T>
void topk_typed(const Tensor& x, int64_t k, bool largest, TopK& out) {
  using K = typename select::KeyOf<T>::type;
  int64_t rows = x.size(0), n = x.size(1), total = rows * n;
  const T* xp = static_cast<const T*>(x.raw_data());
  DeviceBuffer<K> keys(total);
  DeviceBuffer<int64_t> perm(total);
  make_keys<T, K><<<blocks_for(total), kThreads>>>(xp, keys.get(), total, largest);
  EMBER_CUDA_CHECK_LAUNCH();
  with_thrust("topk", [&](auto policy) {
    thrust::sequence(policy, perm.get(), perm.get() + total);
    thrust::stable_sort_by_key(policy, keys.get(), keys.get() + total, perm.get());
    if (rows > 1) {
      DeviceBuffer<int64_t> row(total);
      thrust::transform(policy, perm.get(), perm.get() + total, row.get(), RowOf{n});
      thrust::stable_sort_by_key(policy, row.get(), row.get() + total, perm.get());
    }
  });
  take_first_k<T><<<blocks_for(rows * k), kThreads>>>(xp, perm.get(), out.values.data<T>(), out.indices.data<int64_t>(),
                                                      rows, n, k);
  EMBER_CUDA_CHECK_LAUNCH();
}

}  // namespace

// x: contiguous float (rows, n) on cuda, 0 < k <= n (checked by ops/select/topk.cpp).
TopK topk_rows(const Tensor& x, int64_t k, bool largest) {
  EMBER_CHECK(x.device() == Device::CUDA && x.is_contiguous() && x.dim() == 2, "topk: expected contiguous cuda rows, got ",
              to_string(x.shape()), " on ", x.device());
  int64_t rows = x.size(0);
  TopK out{empty({rows, k}, x.dtype(), Device::CUDA), empty({rows, k}, DType::Int64, Device::CUDA)};
  EMBER_DISPATCH_FLOAT(x.dtype(), "topk", [&] { topk_typed<scalar_t>(x, k, largest, out); });
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::topk_rows.set(&topk_rows);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
