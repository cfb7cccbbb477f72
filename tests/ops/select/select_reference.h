// Float64 references for the select family, written independently of the kernels: rows are read
// element by element with Tensor::at, ordered with std::sort over (value, index) pairs under the
// documented rule (NaN above every number, -0 == +0, ties to the lower index), and summed in
// plain loops.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ops/reference.h"
#include "ops/select/select.h"

namespace ember::testing {

// Does (a, ia) come before (b, ib) in the documented order?
inline bool ref_before(double a, int64_t ia, double b, int64_t ib, bool largest) {
  bool na = std::isnan(a), nb = std::isnan(b);
  if (na != nb) return largest ? na : nb;  // NaN is the largest value
  if (!na && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// The multi-index of row r (over every dim but the last) and element i of it.
inline Shape row_index(const Shape& shape, int64_t r, int64_t i) {
  Shape idx(shape.size());
  idx.back() = i;
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d) {
    idx[size_t(d)] = r % shape[size_t(d)];
    r /= shape[size_t(d)];
  }
  return idx;
}

// Compares topk(x, k, largest) with the reference: the same indices, and values equal to x's
// entries there (NaN where x has NaN). Values must be bit-identical: selection does no arithmetic.
inline ::testing::AssertionResult topk_matches(const Tensor& x, int64_t k, bool largest, const TopK& got) {
  Shape want_shape = x.shape();
  want_shape.back() = k;
  if (got.values.shape() != want_shape || got.indices.shape() != want_shape)
    return ::testing::AssertionFailure() << "shapes " << to_string(got.values.shape()) << " / "
                                         << to_string(got.indices.shape()) << ", expected " << to_string(want_shape);
  if (got.indices.dtype() != DType::Int64 || got.values.dtype() != x.dtype())
    return ::testing::AssertionFailure() << "dtypes " << got.values.dtype() << " / " << got.indices.dtype();
  int64_t n = x.size(-1), rows = k ? got.values.numel() / k : 0;
  std::vector<double> vals = got.values.to_vector<double>();
  std::vector<int64_t> idx = got.indices.to_vector<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::pair<double, int64_t>> row;
    for (int64_t i = 0; i < n; ++i) row.emplace_back(x.at(row_index(x.shape(), r, i)), i);
    std::sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
      return ref_before(a.first, a.second, b.first, b.second, largest);
    });
    for (int64_t j = 0; j < k; ++j) {
      size_t o = size_t(r * k + j);
      double v = row[size_t(j)].first;
      bool same_value = std::isnan(v) ? std::isnan(vals[o]) : vals[o] == v;
      if (idx[o] != row[size_t(j)].second || !same_value)
        return ::testing::AssertionFailure() << "row " << r << " rank " << j << ": got (" << vals[o] << ", " << idx[o]
                                             << "), expected (" << v << ", " << row[size_t(j)].second << ") for k = " << k
                                             << (largest ? " largest" : " smallest") << ", shape " << to_string(x.shape());
    }
  }
  return ::testing::AssertionSuccess();
}

// Inclusive cumulative sum along dim in float64 (from the end when reverse), contiguous.
inline Tensor ref_cumsum(const Tensor& x, int64_t dim, bool reverse = false) {
  if (dim < 0) dim += x.dim();
  Tensor out = zeros(x.shape(), DType::Float64);
  for_each_index(x.shape(), [&](const Shape& i) {
    double acc = 0;
    Shape j = i;
    int64_t n = x.size(dim);
    for (int64_t p = 0; p < n; ++p) {
      bool counted = reverse ? p >= i[size_t(dim)] : p <= i[size_t(dim)];
      j[size_t(dim)] = p;
      if (counted) acc += x.at(j);
    }
    out.set(i, acc);
  });
  return out;
}

}  // namespace ember::testing
