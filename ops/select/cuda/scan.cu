// CUDA cumulative sums over contiguous rows: one Thrust inclusive_scan_by_key over the whole
// (rows, n) buffer, with the row (position / n) as the key so that each row restarts its sum.
// The reverse scan runs the same algorithm over reverse iterators. float32 accumulates in
// double (a converting input iterator and a converting output iterator), as on the CPU.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/reverse_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/scan.h>

#include <type_traits>

#include "framework/cuda/indexing.cuh"
#include "ops/select/cuda/thrust_policy.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;

struct RowOf {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t pos) const { return pos / n; }
};
template <class From, class To>
struct Convert {
  __host__ __device__ To operator()(From v) const { return To(v); }
};
struct SameRow {
  __host__ __device__ bool operator()(int64_t a, int64_t b) const { return a == b; }
};
template <class A>
struct Plus {
  __host__ __device__ A operator()(A a, A b) const { return a + b; }
};

template <class T>
void scan_typed(const Tensor& x, bool reverse, const Tensor& out) {
  using A = acc_t<T>;
  int64_t n = x.size(1), total = x.numel();
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{n});
  auto in = thrust::make_transform_iterator(static_cast<const T*>(x.raw_data()), Convert<T, A>{});
  auto o = thrust::make_transform_output_iterator(out.data<T>(), Convert<A, T>{});
  with_thrust(reverse ? "cumsum_reverse" : "cumsum", [&](auto policy) {
    if (reverse) {
      thrust::inclusive_scan_by_key(policy, thrust::make_reverse_iterator(keys + total), thrust::make_reverse_iterator(keys),
                                    thrust::make_reverse_iterator(in + total), thrust::make_reverse_iterator(o + total),
                                    SameRow{}, Plus<A>{});
    } else {
      thrust::inclusive_scan_by_key(policy, keys, keys + total, in, o, SameRow{}, Plus<A>{});
    }
  });
}

}  // namespace

// x: contiguous float (rows, n) on cuda, n > 0; returns a contiguous (rows, n) result.
Tensor scan_rows(const Tensor& x, bool reverse) {
  EMBER_CHECK(x.device() == Device::CUDA && x.is_contiguous() && x.dim() == 2, "cumsum: expected contiguous cuda rows, got ",
              to_string(x.shape()), " on ", x.device());
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  EMBER_DISPATCH_FLOAT(x.dtype(), "cumsum", [&] { scan_typed<scalar_t>(x, reverse, out); });
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::scan_rows.set(&scan_rows);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
