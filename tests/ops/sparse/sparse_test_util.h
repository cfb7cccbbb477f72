// Random sparse matrices and float64 dense references for the sparse tests.
#pragma once
#include <cmath>
#include <vector>

#include "ops/sparse/sparse_ops.h"
#include "test_util.h"

namespace ember::testing {

// A dense [rows, cols] matrix whose entries are N(0,1) with probability `density` and exactly 0
// otherwise; every third row is forced empty so that empty rows are always covered.
inline Tensor random_sparse_dense(int64_t rows, int64_t cols, double density, uint64_t seed, DType dtype = DType::Float64) {
  Generator g(seed);
  std::vector<double> v(size_t(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double u = g.uniform(), x = g.normal();
      if (u < density && (rows < 3 || i % 3 != 1)) v[size_t(i * cols + j)] = x == 0 ? 1.0 : x;
    }
  return from_vector(v, {rows, cols}).to(dtype);
}

// Row-major float64 copies of a tensor, for references computed in plain loops.
inline std::vector<double> host(const Tensor& t) { return t.to_vector<double>(); }

// C = A B in float64 plus |A| |B| (the scale that float32 rounding errors are relative to).
inline void reference_matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k,
                             int64_t n, std::vector<double>& c, std::vector<double>& scale) {
  c.assign(size_t(m * n), 0.0);
  scale.assign(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      if (a[size_t(i * k + p)] == 0) continue;  // exact either way; keeps sparse references cheap
      for (int64_t j = 0; j < n; ++j) {
        c[size_t(i * n + j)] += a[size_t(i * k + p)] * b[size_t(p * n + j)];
        scale[size_t(i * n + j)] += std::abs(a[size_t(i * k + p)] * b[size_t(p * n + j)]);
      }
    }
}

// |got - want| <= tol * (scale + 1) elementwise, naming the first element that is not.
inline ::testing::AssertionResult close_to_reference(const Tensor& got, const std::vector<double>& want,
                                                     const std::vector<double>& scale, double tol) {
  std::vector<double> g = host(got);
  if (g.size() != want.size())
    return ::testing::AssertionFailure() << "size " << g.size() << " vs reference " << want.size();
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - want[i]) <= tol * (scale[i] + 1.0)))
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs reference " << want[i];
  return ::testing::AssertionSuccess();
}

inline double tolerance(DType t) { return t == DType::Float32 ? 2e-6 : 1e-13; }

}  // namespace ember::testing
