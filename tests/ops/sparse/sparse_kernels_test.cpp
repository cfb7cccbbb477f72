// SpMV, SpMM, SDDMM and SpGEMM against float64 dense references on awkward shapes, both dtypes,
// and on matrices large enough that the kernels split rows across threads.
#include <limits>

#include "sparse_test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct Case {
  int64_t m, k, n;
  double density;
};

// m x k sparse, k x n dense; includes 0-sized, single-row, single-column and empty-row cases, and
// two large enough to exceed the kernels' per-thread grain.
const Case kCases[] = {{1, 1, 1, 1.0},   {1, 7, 3, 0.5},    {7, 1, 2, 0.6},     {0, 5, 3, 0.5},
                       {5, 0, 3, 0.5},   {6, 4, 0, 0.5},    {33, 17, 7, 0.2},   {127, 127, 33, 0.05},
                       {64, 200, 1, 0.3}, {1500, 1200, 2, 0.04}, {300, 900, 40, 0.3}};

// A (m x k, density da) times B (k x n, density db). Rows with at least cols / 64 nonzeros take
// the bitset path, sparser ones the list path: the last three cases cover lists short enough for
// insertion sort, lists for std::sort, and (with the 700-row case) rows split across threads.
struct SpgemmCase {
  int64_t m, k, n;
  double da, db;
};
const SpgemmCase kSpgemmCases[] = {
    {1, 1, 1, 1, 1},         {0, 4, 3, 0.5, 0.5},          {4, 0, 3, 0.5, 0.5},           {4, 3, 0, 0.5, 0.5},
    {1, 40, 30, 0.3, 0.2},   {7, 33, 5, 0.3, 0.4},         {127, 127, 127, 0.05, 0.05},   {60, 50, 70, 0.6, 0.5},
    {700, 500, 400, 0.02, 0.03}, {300, 300, 5000, 0.01, 0.001}, {40, 200, 20000, 0.05, 0.001},
    {2000, 100, 3000, 0.02, 0.005}};

}  // namespace

TEST(SparseKernels, SpmvMatchesReference) {
  uint64_t seed = 10;
  for (const Case& c : kCases)
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor ad = random_sparse_dense(c.m, c.k, c.density, seed++, t);
      Tensor x = random({c.k}, seed++).to(t);
      CsrTensor a = dense_to_csr(ad);
      std::vector<double> want, scale;
      reference_matmul(host(ad), host(x), c.m, c.k, 1, want, scale);
      Tensor y = spmv(a, x);
      EXPECT_EQ(y.shape(), (Shape{c.m}));
      EXPECT_TRUE(close_to_reference(y, want, scale, tolerance(t))) << c.m << "x" << c.k << " " << t;
      // A^T x' against the reference on the transposed dense matrix
      Tensor x2 = random({c.m}, seed++).to(t);
      reference_matmul(host(ad.t().contiguous()), host(x2), c.k, c.m, 1, want, scale);
      EXPECT_TRUE(close_to_reference(spmv(a, x2, true), want, scale, tolerance(t))) << c.m << "x" << c.k << " T";
    }
}

TEST(SparseKernels, SpmmMatchesReferenceIncludingStridedOperand) {
  uint64_t seed = 100;
  for (const Case& c : kCases)
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor ad = random_sparse_dense(c.m, c.k, c.density, seed++, t);
      CsrTensor a = dense_to_csr(ad);
      Tensor b = random({c.n, c.k}, seed++).to(t).t();  // a transposed (non-contiguous) view
      std::vector<double> want, scale;
      reference_matmul(host(ad), host(b), c.m, c.k, c.n, want, scale);
      Tensor out = spmm(a, b);
      EXPECT_EQ(out.shape(), (Shape{c.m, c.n}));
      EXPECT_TRUE(close_to_reference(out, want, scale, tolerance(t))) << c.m << "x" << c.k << "x" << c.n;
      Tensor b2 = random({c.m, c.n}, seed++).to(t);
      reference_matmul(host(ad.t().contiguous()), host(b2), c.k, c.m, c.n, want, scale);
      EXPECT_TRUE(close_to_reference(spmm(a, b2, true), want, scale, tolerance(t))) << "transposed";
    }
}

TEST(SparseKernels, SkewedRowsAreSplitCorrectly) {
  // One dense row among thousands of nearly empty ones: the nnz-balanced split puts it alone.
  int64_t m = 4000, k = 3000;
  std::vector<int64_t> rp{0}, ci;
  std::vector<double> v;
  Generator g(5);
  for (int64_t i = 0; i < m; ++i) {
    if (i == 1234)
      for (int64_t j = 0; j < k; ++j) ci.push_back(j);
    else if (i % 2 == 0)
      ci.push_back(int64_t(g.next_u64() % uint64_t(k)));
    while (v.size() < ci.size()) v.push_back(g.normal());
    rp.push_back(int64_t(ci.size()));
  }
  CsrTensor a(m, k, rp, ci, from_vector(v, {int64_t(v.size())}));
  Tensor x = random({k}, 6);
  std::vector<double> want, scale;
  reference_matmul(host(a.to_dense()), host(x), m, k, 1, want, scale);
  EXPECT_TRUE(close_to_reference(spmv(a, x), want, scale, 1e-13));
}

TEST(SparseKernels, SampledDotMatchesReference) {
  uint64_t seed = 300;
  for (const Case& c : kCases) {
    Tensor ad = random_sparse_dense(c.m, c.k, c.density, seed++);
    CsrTensor a = dense_to_csr(ad);
    Tensor x = random({c.m, c.n}, seed++), y = random({c.k, c.n}, seed++);
    std::vector<double> full, scale;
    reference_matmul(host(x), host(y.t().contiguous()), c.m, c.n, c.k, full, scale);
    std::vector<double> want, wscale;
    for (int64_t i = 0; i < c.m; ++i)
      for (int32_t p = a.pattern().row_ptr[size_t(i)]; p < a.pattern().row_ptr[size_t(i + 1)]; ++p) {
        want.push_back(full[size_t(i * c.k + a.pattern().col_idx[size_t(p)])]);
        wscale.push_back(scale[size_t(i * c.k + a.pattern().col_idx[size_t(p)])]);
      }
    EXPECT_TRUE(close_to_reference(sampled_dot(a.pattern_ptr(), x, y), want, wscale, 1e-13));
  }
}

TEST(SparseKernels, SpgemmMatchesReferenceAndIsSorted) {
  uint64_t seed = 500;
  for (const SpgemmCase& c : kSpgemmCases)
    for (DType t : {DType::Float32, DType::Float64}) {
      Tensor ad = random_sparse_dense(c.m, c.k, c.da, seed++, t), bd = random_sparse_dense(c.k, c.n, c.db, seed++, t);
      sparse::cpu::SpgemmProfile prof;
      CsrTensor as = dense_to_csr(ad), bs = dense_to_csr(bd);
      CsrTensor cs = spgemm(as, bs, &prof);
      EXPECT_EQ(cs.shape(), (Shape{c.m, c.n}));
      std::vector<double> want, scale;
      reference_matmul(host(ad), host(bd), c.m, c.k, c.n, want, scale);
      EXPECT_TRUE(close_to_reference(cs.to_dense(), want, scale, tolerance(t))) << c.m << "x" << c.k << "x" << c.n;
      // Exactly the structurally nonzero positions, sorted: re-validate the arrays.
      std::vector<int64_t> rp(cs.pattern().row_ptr.begin(), cs.pattern().row_ptr.end());
      std::vector<int64_t> ci(cs.pattern().col_idx.begin(), cs.pattern().col_idx.end());
      EXPECT_NO_THROW(make_csr_pattern(c.m, c.n, rp, ci));
      int64_t structural = 0;
      for (size_t i = 0; i < scale.size(); ++i) structural += scale[i] != 0;
      EXPECT_EQ(cs.nnz(), structural);
      int64_t products = 0;  // the profile counts every multiply-add
      const CsrPattern &pa = as.pattern(), &pb = bs.pattern();
      for (int32_t col : pa.col_idx) products += pb.row_ptr[size_t(col) + 1] - pb.row_ptr[size_t(col)];
      EXPECT_EQ(prof.products, products);
    }
}

// The one-pass mode (rows written to upper-bound slots, then moved) and the two-pass one give the
// same C bit for bit, on every SpGEMM case, both dtypes, with rows split across threads in the
// larger ones.
TEST(SparseKernels, SpgemmOnePassEqualsTwoPass) {
  uint64_t seed = 900;
  for (const SpgemmCase& c : kSpgemmCases)
    for (DType t : {DType::Float32, DType::Float64}) {
      CsrTensor as = dense_to_csr(random_sparse_dense(c.m, c.k, c.da, seed++, t));
      CsrTensor bs = dense_to_csr(random_sparse_dense(c.k, c.n, c.db, seed++, t));
      CsrPattern one, two;
      Tensor v1, v2;
      sparse::cpu::SpgemmProfile p1, p2;
      EMBER_DISPATCH_FLOAT(t, "test", [&] {
        const scalar_t *av = as.values().data<scalar_t>(), *bv = bs.values().data<scalar_t>();
        sparse::cpu::spgemm(as.pattern(), av, bs.pattern(), bv, one, v1, &p1, std::numeric_limits<int64_t>::max());
        sparse::cpu::spgemm(as.pattern(), av, bs.pattern(), bv, two, v2, &p2, -1);
      });
      EXPECT_TRUE(p1.one_pass);
      EXPECT_FALSE(p2.one_pass);
      EXPECT_EQ(one.rows, two.rows);
      EXPECT_EQ(one.cols, two.cols);
      EXPECT_EQ(one.row_ptr, two.row_ptr) << c.m << "x" << c.k << "x" << c.n;
      EXPECT_EQ(one.col_idx, two.col_idx) << c.m << "x" << c.k << "x" << c.n;
      ASSERT_EQ(v1.numel(), v2.numel());
      EXPECT_EQ(v1.to_vector<double>(), v2.to_vector<double>()) << c.m << "x" << c.k << "x" << c.n;
    }
}

TEST(SparseKernels, BadOperandsRaise) {
  CsrTensor a = dense_to_csr(random_sparse_dense(4, 3, 0.5, 1));
  EXPECT_EMBER_ERROR(spmm(a, random({4, 2}, 2)), "cannot multiply a dense operand of shape [4, 2]");
  EXPECT_EMBER_ERROR(spmm(a, random({3, 2}, 2).to(DType::Float32)), "dtype mismatch");
  EXPECT_EMBER_ERROR(spmv(a, random({3, 1}, 2)), "expected a 1-d vector");
  EXPECT_EMBER_ERROR(spgemm(a, a), "inner dimensions differ");
  EXPECT_EMBER_ERROR(spgemm(a, a.transpose().to(DType::Float32)), "dtype mismatch");
  EXPECT_EMBER_ERROR(sampled_dot(a.pattern_ptr(), random({4, 2}, 3), random({4, 2}, 4)), "expected x [4, k] and y [3, k]");
}
