// Dense -> CSR: count each row's nonzeros in parallel, prefix-sum, then fill in parallel.
#include <limits>

#include "framework/core/error.h"
#include "framework/core/parallel.h"
#include "ops/sparse/cpu/kernels.h"

namespace ember::sparse::cpu {

template <class T>
void dense_to_csr(const T* dense, int64_t rows, int64_t cols, CsrPattern& out, Tensor& values_out) {
  IndexVector& row_ptr = out.row_ptr;
  IndexVector& col_idx = out.col_idx;
  out.rows = rows;
  out.cols = cols;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(cols, 1));
  std::vector<int64_t> count(size_t(rows + 1), 0);
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T* row = dense + i * cols;
      int64_t n = 0;
      for (int64_t j = 0; j < cols; ++j) n += row[j] != T(0);
      count[size_t(i + 1)] = n;
    }
  });
  for (int64_t i = 0; i < rows; ++i) count[size_t(i + 1)] += count[size_t(i)];
  EMBER_CHECK(count[size_t(rows)] <= std::numeric_limits<int32_t>::max(), "dense_to_csr: ", count[size_t(rows)],
              " nonzeros exceed the int32 index limit");
  row_ptr.resize(size_t(rows + 1));
  for (int64_t i = 0; i <= rows; ++i) row_ptr[size_t(i)] = int32_t(count[size_t(i)]);
  col_idx.resize(size_t(count[size_t(rows)]));
  values_out = empty({count[size_t(rows)]}, dtype_of<T>::value);
  T* values = values_out.data<T>();
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T* row = dense + i * cols;
      int32_t w = row_ptr[size_t(i)];
      for (int64_t j = 0; j < cols; ++j)
        if (row[j] != T(0)) {
          col_idx[size_t(w)] = int32_t(j);
          values[size_t(w++)] = row[j];
        }
    }
  });
}

template void dense_to_csr<float>(const float*, int64_t, int64_t, CsrPattern&, Tensor&);
template void dense_to_csr<double>(const double*, int64_t, int64_t, CsrPattern&, Tensor&);

}  // namespace ember::sparse::cpu
