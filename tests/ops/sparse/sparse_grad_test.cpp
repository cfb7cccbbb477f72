// Derivatives of spmm / spmv / sampled_dot with respect to the sparse values and the dense
// operand: VJP, JVP and the dot-product identity by gradcheck, and second derivatives.
#include "sparse_test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {
CsrTensor pattern_of(int64_t m, int64_t k, double density, uint64_t seed) {
  return dense_to_csr(random_sparse_dense(m, k, density, seed));
}
}  // namespace

TEST(SparseGrad, SpmmValuesAndDense) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 5, 3}, {5, 9, 1}, {6, 4, 2}}) {
    CsrTensor a = pattern_of(m, k, 0.5, uint64_t(m * 10 + k));
    ASSERT_GT(a.nnz(), 0);
    Tensor v = random({a.nnz()}, 1), b = random({k, n}, 2), bt = random({m, n}, 3);
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return spmm(a.with_values(x[0]), x[1]); }, {v, b}))
        << m << "x" << k << "x" << n;
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return spmm(a.with_values(x[0]), x[1], true); }, {v, bt}))
        << "transposed";
  }
}

TEST(SparseGrad, SpmvAndStridedOperand) {
  CsrTensor a = pattern_of(6, 8, 0.4, 9);
  Tensor v = random({a.nnz()}, 4), x = random({8}, 5), bt = random({3, 8}, 6);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return spmv(a.with_values(in[0]), in[1]); }, {v, x}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return spmm(a.with_values(in[0]), in[1].t()); }, {v, bt}));
}

TEST(SparseGrad, SampledDot) {
  CsrTensor a = pattern_of(5, 6, 0.5, 11);
  Tensor x = random({5, 3}, 7), y = random({6, 3}, 8);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return sampled_dot(a.pattern_ptr(), in[0], in[1]); }, {x, y}));
}

TEST(SparseGrad, SecondDerivativeThroughTheVjp) {
  // g(v, B) = d/dB sum(tanh(A B)) is itself built from spmm and sampled_dot; check its derivatives.
  CsrTensor a = pattern_of(5, 4, 0.5, 13);
  Tensor v = random({a.nnz()}, 9), b = random({4, 2}, 10);
  auto inner = [&](const std::vector<Tensor>& in) {
    FnN loss = [&](const std::vector<Tensor>& z) { return sum(tanh(spmm(a.with_values(z[0]), z[1]))); };
    return grad(loss, 1)(in);
  };
  EXPECT_TRUE(grad_ok(inner, {v, b}));
}

TEST(SparseGrad, BackwardOnLeavesMatchesDenseMatmul) {
  // The same gradients as the dense product, through the PyTorch-style API.
  Tensor ad = random_sparse_dense(6, 5, 0.5, 21);
  CsrTensor a = dense_to_csr(ad);
  Tensor v = a.values().clone().requires_grad_(), b = random({5, 3}, 22).requires_grad_();
  Tensor w = random({6, 3}, 23);
  sum(spmm(a.with_values(v), b) * w).backward();
  Tensor dd = ad.clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
  sum(matmul(dd, b2) * w).backward();
  EXPECT_TRUE(all_close(b.grad(), b2.grad(), 1e-12, 1e-12));
  std::vector<double> dv = v.grad().to_vector<double>(), ddense = dd.grad().to_vector<double>();
  const CsrPattern& p = a.pattern();
  for (int64_t i = 0; i < p.rows; ++i)
    for (int32_t k = p.row_ptr[size_t(i)]; k < p.row_ptr[size_t(i + 1)]; ++k)
      EXPECT_NEAR(dv[size_t(k)], ddense[size_t(i * p.cols + p.col_idx[size_t(k)])], 1e-12);
}

TEST(SparseGrad, SpgemmRefusesTracedValues) {
  CsrTensor a = pattern_of(4, 4, 0.5, 31);
  Tensor v = a.values().clone().requires_grad_();
  EXPECT_EMBER_ERROR(spgemm(a.with_values(v), a), "not differentiable");
}
