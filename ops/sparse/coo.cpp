// CooTensor: checked construction, dense conversions, and the sort + duplicate sum into CSR.
#include "ops/sparse/coo.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ember {

CooTensor::CooTensor(int64_t rows, int64_t cols, const std::vector<int64_t>& row, const std::vector<int64_t>& col,
                     Tensor values)
    : rows_(rows), cols_(cols), values_(std::move(values)) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  EMBER_CHECK(rows >= 0 && cols >= 0 && rows <= kMax && cols <= kMax, "CooTensor: shape [", rows, ", ", cols,
              "] must be non-negative and below 2^31");
  EMBER_CHECK(row.size() == col.size(), "CooTensor: ", row.size(), " row indices but ", col.size(),
              " column indices");
  EMBER_CHECK(int64_t(row.size()) <= kMax, "CooTensor: ", row.size(), " entries exceed the int32 index limit");
  EMBER_CHECK(values_.defined() && is_floating(values_.dtype()), "CooTensor: values must be float32 or float64");
  EMBER_CHECK(values_.dim() == 1 && values_.numel() == int64_t(row.size()), "CooTensor: expected values of shape [",
              row.size(), "], got ", to_string(values_.shape()));
  check_cpu(values_, "CooTensor");
  row_.resize(row.size());
  col_.resize(col.size());
  for (size_t k = 0; k < row.size(); ++k) {
    EMBER_CHECK(row[k] >= 0 && row[k] < rows && col[k] >= 0 && col[k] < cols, "CooTensor: entry ", k, " at (",
                row[k], ", ", col[k], ") is outside the shape [", rows, ", ", cols, "]");
    row_[k] = int32_t(row[k]);
    col_[k] = int32_t(col[k]);
  }
}

Tensor CooTensor::to_dense() const {
  Tensor v = values_.detach().contiguous();
  return EMBER_DISPATCH_FLOAT(v.dtype(), "CooTensor::to_dense", [&] {
    Tensor out = zeros({rows_, cols_}, v.dtype());
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* pv = v.data<scalar_t>();
    for (size_t k = 0; k < row_.size(); ++k) o[int64_t(row_[k]) * cols_ + col_[k]] += pv[k];
    return out;
  });
}

CsrTensor CooTensor::to_csr() const {
  Tensor v = values_.detach().contiguous();
  return EMBER_DISPATCH_FLOAT(v.dtype(), "CooTensor::to_csr", [&] {
    const scalar_t* pv = v.data<scalar_t>();
    const size_t n = row_.size();
    // Bucket the entries by row (a stable counting sort), keeping only their positions.
    std::vector<int32_t> start(size_t(rows_ + 1), 0);
    for (int32_t r : row_) ++start[size_t(r) + 1];
    for (int64_t i = 0; i < rows_; ++i) start[size_t(i + 1)] += start[size_t(i)];
    std::vector<int32_t> order(n), next(start.begin(), start.end() - 1);
    for (size_t k = 0; k < n; ++k) order[size_t(next[size_t(row_[k])]++)] = int32_t(k);
    // Within each row: sort by column, then merge runs of equal columns by summing.
    auto p = std::make_shared<CsrPattern>();
    p->rows = rows_;
    p->cols = cols_;
    p->row_ptr.assign(size_t(rows_ + 1), 0);
    p->col_idx.reserve(n);
    std::vector<scalar_t> vals;
    vals.reserve(n);
    for (int64_t i = 0; i < rows_; ++i) {
      auto b = order.begin() + start[size_t(i)], e = order.begin() + start[size_t(i + 1)];
      std::stable_sort(b, e, [&](int32_t x, int32_t y) { return col_[size_t(x)] < col_[size_t(y)]; });
      for (auto it = b; it != e; ++it) {
        int32_t c = col_[size_t(*it)];
        if (int64_t(p->col_idx.size()) > p->row_ptr[size_t(i)] && p->col_idx.back() == c) {
          vals.back() += pv[*it];
        } else {
          p->col_idx.push_back(c);
          vals.push_back(pv[*it]);
        }
      }
      p->row_ptr[size_t(i + 1)] = int32_t(p->col_idx.size());
    }
    return CsrTensor(std::move(p), from_vector(vals, {int64_t(vals.size())}));
  });
}

CooTensor dense_to_coo(const Tensor& dense) {
  CsrTensor csr = dense_to_csr(dense);
  const CsrPattern& p = csr.pattern();
  std::vector<int64_t> row(size_t(p.nnz())), col(size_t(p.nnz()));
  for (int64_t i = 0; i < p.rows; ++i)
    for (int32_t k = p.row_ptr[size_t(i)]; k < p.row_ptr[size_t(i + 1)]; ++k) {
      row[size_t(k)] = i;
      col[size_t(k)] = p.col_idx[size_t(k)];
    }
  return CooTensor(p.rows, p.cols, row, col, csr.values());
}

}  // namespace ember
