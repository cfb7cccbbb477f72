// Sparse matrices as coordinate triplets (row, col, value): the natural form for building a matrix
// entry by entry. Triplets may come in any order and may repeat a position; to_dense and to_csr
// sum repeated entries, as SciPy's coo_matrix does.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/sparse/csr.h"

namespace ember {

class CooTensor {
 public:
  CooTensor() = default;
  // Checks that the three arrays have one entry per nonzero and every index is in range.
  CooTensor(int64_t rows, int64_t cols, const std::vector<int64_t>& row, const std::vector<int64_t>& col,
            Tensor values);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  Shape shape() const { return {rows_, cols_}; }
  int64_t nnz() const { return int64_t(row_.size()); }  // entries stored, duplicates counted
  DType dtype() const { return values_.dtype(); }
  const std::vector<int32_t>& row() const { return row_; }
  const std::vector<int32_t>& col() const { return col_; }
  const Tensor& values() const { return values_; }

  Tensor to_dense() const;  // duplicates summed
  // Sorts by (row, col) and sums duplicates. Linear-time bucket pass by row, then a sort within
  // each row, so the cost is O(nnz log(nnz per row)).
  CsrTensor to_csr() const;

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::vector<int32_t> row_, col_;
  Tensor values_;
};

CooTensor dense_to_coo(const Tensor& dense);  // row-major order, exact zeros dropped

}  // namespace ember
