// CSR/COO construction, validation and conversions.
#include "sparse_test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {
Tensor vals(std::vector<double> v) { return from_vector(v, {int64_t(v.size())}); }
std::vector<int32_t> plain(const IndexVector& v) { return std::vector<int32_t>(v.begin(), v.end()); }
}  // namespace

TEST(SparseFormat, DenseRoundTripOnAwkwardShapes) {
  const Shape shapes[] = {{0, 5}, {5, 0}, {1, 1}, {1, 7}, {7, 1}, {33, 17}, {127, 64}};
  uint64_t seed = 1;
  for (const Shape& s : shapes)
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor d = random_sparse_dense(s[0], s[1], 0.3, seed++, t);
      CsrTensor c = dense_to_csr(d);
      EXPECT_EQ(c.shape(), s);
      EXPECT_EQ(c.dtype(), t);
      int64_t nz = 0;
      for (double x : host(d)) nz += x != 0;
      EXPECT_EQ(c.nnz(), nz) << to_string(s);
      EXPECT_TRUE(all_close(c.to_dense(), d, 0, 0)) << to_string(s);
      EXPECT_TRUE(all_close(dense_to_coo(d).to_csr().to_dense(), d, 0, 0)) << to_string(s);
    }
}

TEST(SparseFormat, DenseToCsrKnownArrays) {
  Tensor d = from_vector(std::vector<double>{0, 2, 0, 0, 0, 0, 3, 0, 4}, {3, 3});
  CsrTensor c = dense_to_csr(d);
  EXPECT_EQ(plain(c.pattern().row_ptr), (std::vector<int32_t>{0, 1, 1, 3}));
  EXPECT_EQ(plain(c.pattern().col_idx), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(c.values().to_vector<double>(), (std::vector<double>{2, 3, 4}));
  EXPECT_DOUBLE_EQ(c.density(), 3.0 / 9.0);
}

TEST(SparseFormat, CooSortsAndSumsDuplicates) {
  // (2,1) appears three times, (0,3) twice; input order is scrambled.
  CooTensor coo(3, 4, {2, 0, 2, 1, 0, 2, 2}, {1, 3, 1, 0, 3, 0, 1}, vals({1.5, 2, -0.5, 7, 1, 4, 2}));
  CsrTensor c = coo.to_csr();
  EXPECT_EQ(plain(c.pattern().row_ptr), (std::vector<int32_t>{0, 1, 2, 4}));
  EXPECT_EQ(plain(c.pattern().col_idx), (std::vector<int32_t>{3, 0, 0, 1}));
  EXPECT_EQ(c.values().to_vector<double>(), (std::vector<double>{3, 7, 4, 3}));
  EXPECT_TRUE(all_close(c.to_dense(), coo.to_dense(), 0, 0));
  Tensor want = from_vector(std::vector<double>{0, 0, 0, 3, 7, 0, 0, 0, 4, 3, 0, 0}, {3, 4});
  EXPECT_TRUE(all_close(coo.to_dense(), want, 0, 0));
}

TEST(SparseFormat, CooRandomWithDuplicatesMatchesDense) {
  Generator g(7);
  int64_t rows = 37, cols = 29, n = 500;
  std::vector<int64_t> r(static_cast<size_t>(n)), c(static_cast<size_t>(n));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    r[size_t(k)] = int64_t(g.next_u64() % uint64_t(rows));
    c[size_t(k)] = int64_t(g.next_u64() % uint64_t(cols / 3));  // few columns: many duplicates
    v[size_t(k)] = g.normal();
  }
  CooTensor coo(rows, cols, r, c, from_vector(v, {int64_t(v.size())}));
  CsrTensor csr = coo.to_csr();
  EXPECT_LT(csr.nnz(), n);
  // The result passes the validator that user arrays go through (sorted, unique, in range).
  std::vector<int64_t> rp(csr.pattern().row_ptr.begin(), csr.pattern().row_ptr.end());
  std::vector<int64_t> ci(csr.pattern().col_idx.begin(), csr.pattern().col_idx.end());
  EXPECT_NO_THROW(make_csr_pattern(rows, cols, rp, ci));
  EXPECT_TRUE(all_close(csr.to_dense(), coo.to_dense(), 1e-12, 1e-12));
}

TEST(SparseFormat, ValidatesUserCsrArrays) {
  Tensor v3 = vals({1, 2, 3});
  EXPECT_NO_THROW(CsrTensor(2, 3, {0, 2, 3}, {0, 2, 1}, v3));
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2}, {0, 2, 1}, v3), "rows + 1 = 3 entries");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {1, 2, 3}, {0, 2, 1}, v3), "row_ptr[0] must be 0");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 2}, {0, 2, 1}, v3), "must equal the number of column indices");
  EXPECT_EMBER_ERROR(CsrTensor(3, 3, {0, 2, 1, 3}, {0, 2, 1}, v3), "non-decreasing");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {0, 3, 1}, v3), "column index 3 of row 0");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {0, -1, 1}, v3), "outside [0, 3)");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {2, 0, 1}, v3), "strictly increasing");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {1, 1, 1}, v3), "no duplicates");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {0, 2, 1}, vals({1, 2})), "expected values of shape [3]");
  EXPECT_EMBER_ERROR(CsrTensor(2, 3, {0, 2, 3}, {0, 2, 1}, arange(3)), "float32 or float64");
  EXPECT_EMBER_ERROR(CsrTensor(-1, 3, {0}, {}, vals({})), "negative shape");
  EXPECT_EMBER_ERROR(CsrTensor(int64_t(1) << 32, 3, {0}, {}, vals({})), "int32 index limit");
}

TEST(SparseFormat, ValidatesCooInput) {
  EXPECT_EMBER_ERROR(CooTensor(2, 2, {0, 1}, {0}, vals({1, 2})), "2 row indices but 1 column");
  EXPECT_EMBER_ERROR(CooTensor(2, 2, {0, 2}, {0, 1}, vals({1, 2})), "entry 1 at (2, 1) is outside");
  EXPECT_EMBER_ERROR(CooTensor(2, 2, {0, 1}, {0, -1}, vals({1, 2})), "outside the shape");
  EXPECT_EMBER_ERROR(CooTensor(2, 2, {0, 1}, {0, 1}, vals({1})), "expected values of shape [2]");
  EXPECT_EMBER_ERROR(dense_to_csr(zeros({2, 2, 2})), "expected a 2-d tensor");
}

TEST(SparseFormat, TransposeMatchesDense) {
  for (auto [r, c] : {std::pair<int64_t, int64_t>{1, 1}, {7, 33}, {33, 7}, {0, 4}, {4, 0}, {64, 64}}) {
    Tensor d = random_sparse_dense(r, c, 0.25, uint64_t(r * 100 + c));
    CsrTensor a = dense_to_csr(d);
    CsrTensor t = a.transpose();
    EXPECT_EQ(t.shape(), (Shape{c, r}));
    EXPECT_TRUE(all_close(t.to_dense(), d.t().contiguous(), 0, 0));
    EXPECT_TRUE(all_close(t.transpose().to_dense(), d, 0, 0));
  }
}

TEST(SparseFormat, WithValuesAndCast) {
  CsrTensor a = dense_to_csr(random_sparse_dense(9, 5, 0.5, 3));
  CsrTensor f = a.to(DType::Float32);
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(f.pattern_ptr(), a.pattern_ptr());  // the pattern is shared, not copied
  EXPECT_TRUE(all_close(f.to_dense(), a.to_dense().to(DType::Float32), 1e-6, 1e-6));
  EXPECT_EMBER_ERROR(a.with_values(zeros({a.nnz() + 1}, DType::Float64)), "one per nonzero");
}
