// CPU top-k and scans. Rows are independent, so both split rows over threads with parallel_for.
#include "ops/select/cpu/select_cpu.h"

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <vector>

#include "framework/core/parallel.h"
#include "ops/select/order_key.h"

namespace ember::cpu {
namespace {

// Selection per row on an index array: nth_element puts the k first (by key, then index) in
// front in O(n), then only those k are sorted. Keys are computed once per row, so comparisons
// are integer compares and NaN needs no special case.
template <class T>
void topk_typed(const T* x, int64_t rows, int64_t n, int64_t k, bool largest, T* vals, int64_t* idx) {
  using K = typename select::KeyOf<T>::type;
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::vector<K> keys(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = b; r < e; ++r) {
      const T* row = x + r * n;
      for (int64_t i = 0; i < n; ++i) keys[size_t(i)] = select::order_key(row[i], largest);
      std::iota(order.begin(), order.end(), int64_t(0));
      auto before = [&](int64_t a, int64_t c) {
        K ka = keys[size_t(a)], kc = keys[size_t(c)];
        return ka < kc || (ka == kc && a < c);
      };
      auto mid = order.begin() + k;
      if (k < n) std::nth_element(order.begin(), mid, order.end(), before);
      std::sort(order.begin(), mid, before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t i = order[size_t(j)];
        vals[r * k + j] = row[i];
        idx[r * k + j] = i;
      }
    }
  });
}

// Accumulates float32 in double: one add per element either way, and the long sums of a
// cumulative sum are where float32 rounding would grow with the length of the dim.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;

template <class T>
void scan_typed(const Tensor& x, int64_t dim, bool reverse, T* out) {
  const Shape& shape = x.shape();
  int64_t n = shape[size_t(dim)], xs = x.strides()[size_t(dim)];
  int64_t lines = n ? x.numel() / n : 0;
  // The output is contiguous: the stride of dim in it is the product of the later sizes.
  int64_t os = 1;
  for (size_t d = size_t(dim) + 1; d < shape.size(); ++d) os *= shape[d];
  const T* base = static_cast<const T*>(x.raw_data());
  parallel_for(lines, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      // Line l's coordinates over the other dims (row-major), as offsets into x and out.
      int64_t rem = l, xo = 0, oo = 0, ostride = 1;
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        int64_t size = shape[size_t(d)];
        if (d == dim) {
          ostride *= size;
          continue;
        }
        int64_t i = rem % size;
        rem /= size;
        xo += i * x.strides()[size_t(d)];
        oo += i * ostride;
        ostride *= size;
      }
      acc_t<T> acc = 0;
      for (int64_t s = 0; s < n; ++s) {
        int64_t i = reverse ? n - 1 - s : s;
        acc += base[xo + i * xs];
        out[oo + i * os] = T(acc);
      }
    }
  });
}

}  // namespace

TopK topk_rows(const Tensor& x, int64_t k, bool largest) {
  int64_t rows = x.size(0), n = x.size(1);
  TopK r{empty({rows, k}, x.dtype()), empty({rows, k}, DType::Int64)};
  EMBER_DISPATCH_FLOAT(x.dtype(), "topk", [&] {
    topk_typed<scalar_t>(x.data<scalar_t>(), rows, n, k, largest, r.values.data<scalar_t>(), r.indices.data<int64_t>());
  });
  return r;
}

Tensor scan(const Tensor& x, int64_t dim, bool reverse) {
  Tensor out = empty(x.shape(), x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "cumsum", [&] { scan_typed<scalar_t>(x, dim, reverse, out.data<scalar_t>()); });
  return out;
}

}  // namespace ember::cpu
