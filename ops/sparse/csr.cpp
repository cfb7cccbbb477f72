// CsrTensor: validation of user arrays, conversions to and from dense, transpose.
#include "ops/sparse/csr.h"

#include <algorithm>
#include <limits>

#include "ops/elementwise/elementwise.h"
#include "ops/sparse/cpu/kernels.h"

namespace ember {

namespace {
constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

void check_values(const CsrPattern& p, const Tensor& values, const char* op) {
  EMBER_CHECK(values.defined(), op, ": values are undefined");
  EMBER_CHECK(is_floating(values.dtype()), op, ": values must be float32 or float64, got ", values.dtype());
  EMBER_CHECK(values.dim() == 1 && values.numel() == p.nnz(), op, ": expected values of shape [", p.nnz(),
              "] (one per nonzero), got ", to_string(values.shape()));
  check_cpu(values, op);
}
}  // namespace

std::shared_ptr<const CsrPattern> make_csr_pattern(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr,
                                                   const std::vector<int64_t>& col_idx, const char* op) {
  EMBER_CHECK(rows >= 0 && cols >= 0, op, ": negative shape [", rows, ", ", cols, "]");
  EMBER_CHECK(rows <= kMaxIndex && cols <= kMaxIndex && int64_t(col_idx.size()) <= kMaxIndex, op,
              ": shape [", rows, ", ", cols, "] with ", col_idx.size(), " nonzeros exceeds the int32 index limit");
  EMBER_CHECK(int64_t(row_ptr.size()) == rows + 1, op, ": row_ptr must have rows + 1 = ", rows + 1,
              " entries, got ", row_ptr.size());
  EMBER_CHECK(row_ptr[0] == 0, op, ": row_ptr[0] must be 0, got ", row_ptr[0]);
  EMBER_CHECK(row_ptr[rows] == int64_t(col_idx.size()), op, ": row_ptr[", rows, "] = ", row_ptr[rows],
              " must equal the number of column indices, ", col_idx.size());
  auto p = std::make_shared<CsrPattern>();
  p->rows = rows;
  p->cols = cols;
  p->row_ptr.resize(size_t(rows + 1));
  p->col_idx.resize(col_idx.size());
  for (int64_t i = 0; i < rows; ++i) {
    int64_t b = row_ptr[size_t(i)], e = row_ptr[size_t(i + 1)];
    EMBER_CHECK(b <= e, op, ": row_ptr must be non-decreasing, but row_ptr[", i, "] = ", b, " > row_ptr[", i + 1,
                "] = ", e);
    for (int64_t k = b; k < e; ++k) {
      int64_t c = col_idx[size_t(k)];
      EMBER_CHECK(c >= 0 && c < cols, op, ": column index ", c, " of row ", i, " (entry ", k, ") is outside [0, ",
                  cols, ")");
      EMBER_CHECK(k == b || c > col_idx[size_t(k - 1)], op, ": column indices of row ", i,
                  " must be strictly increasing (sorted, no duplicates), got ", col_idx[size_t(k - 1)], " then ", c,
                  " at entry ", k);
      p->col_idx[size_t(k)] = int32_t(c);
    }
    p->row_ptr[size_t(i)] = int32_t(b);
  }
  p->row_ptr[size_t(rows)] = int32_t(row_ptr[size_t(rows)]);
  return p;
}

const CsrTranspose& CsrPattern::transpose() const {
  std::call_once(transpose_once_, [this] {
    auto t = std::make_shared<CsrTranspose>();
    auto tp = std::make_shared<CsrPattern>();
    tp->rows = cols;
    tp->cols = rows;
    tp->row_ptr.assign(size_t(cols + 1), 0);
    tp->col_idx.resize(col_idx.size());
    t->perm.resize(col_idx.size());
    for (int32_t c : col_idx) ++tp->row_ptr[size_t(c) + 1];
    for (int64_t j = 0; j < cols; ++j) tp->row_ptr[size_t(j + 1)] += tp->row_ptr[size_t(j)];
    std::vector<int32_t> next(tp->row_ptr.begin(), tp->row_ptr.end() - 1);
    // Visiting A's rows in order writes each row of A^T in increasing column order: sorted for free.
    for (int64_t i = 0; i < rows; ++i)
      for (int32_t k = row_ptr[size_t(i)]; k < row_ptr[size_t(i + 1)]; ++k) {
        int32_t dst = next[size_t(col_idx[size_t(k)])]++;
        tp->col_idx[size_t(dst)] = int32_t(i);
        t->perm[size_t(dst)] = k;
      }
    t->pattern = std::move(tp);
    transpose_ = std::move(t);
  });
  return *transpose_;
}

CsrTensor::CsrTensor(std::shared_ptr<const CsrPattern> pattern, Tensor values)
    : pattern_(std::move(pattern)), values_(std::move(values)) {
  EMBER_CHECK(pattern_, "CsrTensor: pattern is null");
  check_values(*pattern_, values_, "CsrTensor");
}

CsrTensor::CsrTensor(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr,
                     const std::vector<int64_t>& col_idx, Tensor values)
    : CsrTensor(make_csr_pattern(rows, cols, row_ptr, col_idx, "CsrTensor"), std::move(values)) {}

const CsrPattern& CsrTensor::pattern() const {
  EMBER_CHECK(pattern_, "use of an undefined CsrTensor");
  return *pattern_;
}

double CsrTensor::density() const {
  double cells = double(rows()) * double(cols());
  return cells > 0 ? double(nnz()) / cells : 0.0;
}

Tensor CsrTensor::to_dense() const {
  const CsrPattern& p = pattern();
  Tensor v = values_.detach().contiguous();
  return EMBER_DISPATCH_FLOAT(v.dtype(), "CsrTensor::to_dense", [&] {
    Tensor out = zeros({p.rows, p.cols}, v.dtype());
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* pv = v.data<scalar_t>();
    for (int64_t i = 0; i < p.rows; ++i)
      for (int32_t k = p.row_ptr[size_t(i)]; k < p.row_ptr[size_t(i + 1)]; ++k) o[i * p.cols + p.col_idx[size_t(k)]] = pv[k];
    return out;
  });
}

CsrTensor CsrTensor::transpose() const {
  const CsrTranspose& t = pattern().transpose();
  Tensor v = values_.detach().contiguous();
  return EMBER_DISPATCH_FLOAT(v.dtype(), "CsrTensor::transpose", [&] {
    Tensor out = empty({nnz()}, v.dtype());
    sparse::cpu::gather(v.data<scalar_t>(), t.perm.data(), nnz(), out.data<scalar_t>());
    return CsrTensor(t.pattern, out);
  });
}

CsrTensor CsrTensor::to(DType dtype) const { return CsrTensor(pattern_, cast(values_.detach(), dtype)); }

CsrTensor dense_to_csr(const Tensor& dense) {
  EMBER_CHECK(dense.defined() && dense.dim() == 2, "dense_to_csr: expected a 2-d tensor, got ",
              dense.defined() ? to_string(dense.shape()) : std::string("undefined"));
  check_cpu(dense, "dense_to_csr");
  int64_t rows = dense.size(0), cols = dense.size(1);
  EMBER_CHECK(rows <= kMaxIndex && cols <= kMaxIndex, "dense_to_csr: shape ", to_string(dense.shape()),
              " exceeds the int32 index limit");
  Tensor d = dense.detach().contiguous();
  return EMBER_DISPATCH_FLOAT(d.dtype(), "dense_to_csr", [&] {
    auto p = std::make_shared<CsrPattern>();
    Tensor vals;
    sparse::cpu::dense_to_csr(d.data<scalar_t>(), rows, cols, *p, vals);
    return CsrTensor(std::move(p), vals);
  });
}

}  // namespace ember
