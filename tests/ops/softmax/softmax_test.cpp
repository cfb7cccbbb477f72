#include <cmath>
#include <limits>

#include "ops/row_reference.h"
#include "ops/softmax/softmax.h"

using namespace ember;
using namespace ember::testing;

namespace {

std::vector<double> ref_softmax(const std::vector<double>& r) {
  double m = r[0];
  for (double v : r) m = std::max(m, v);
  double s = 0;
  for (double v : r) s += std::exp(v - m);
  std::vector<double> y;
  for (double v : r) y.push_back(std::exp(v - m) / s);
  return y;
}
std::vector<double> ref_log_softmax(const std::vector<double>& r) {
  std::vector<double> y = ref_softmax(r);
  for (double& v : y) v = std::log(v);
  return y;
}
std::vector<double> ref_logsumexp(const std::vector<double>& r) {
  double m = r[0];
  for (double v : r) m = std::max(m, v);
  double s = 0;
  for (double v : r) s += std::exp(v - m);
  return {m + std::log(s)};
}

struct Case {
  Shape shape;
  int64_t dim;
};
// Awkward sizes along and across the reduced dim, each dim of a 3-d tensor.
const std::vector<Case> kCases = {{{1}, 0},       {{7}, -1},       {{33}, 0},       {{3, 127}, 1},
                                  {{127, 3}, 0},  {{2, 5, 7}, 0},  {{2, 5, 7}, 1},  {{2, 5, 7}, 2},
                                  {{4, 1, 33}, 1}, {{1, 1}, -1}};

}  // namespace

TEST(Softmax, MatchesFloat64Reference) {
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    Tensor x = random(c.shape, seed++) * 3.0;
    SCOPED_TRACE(to_string(c.shape) + " dim " + std::to_string(c.dim));
    EXPECT_TRUE(all_close(softmax(x, c.dim), map_rows(x, c.dim, x.size(c.dim), ref_softmax), 1e-14, 1e-12));
    EXPECT_TRUE(all_close(log_softmax(x, c.dim), map_rows(x, c.dim, x.size(c.dim), ref_log_softmax), 1e-13, 1e-12));
    Tensor lse = map_rows(x, c.dim, 1, ref_logsumexp);
    EXPECT_TRUE(all_close(logsumexp(x, c.dim, true), lse, 1e-13, 1e-12));
    EXPECT_TRUE(all_close(logsumexp(x, c.dim), lse.squeeze(c.dim), 1e-13, 1e-12));
  }
}

TEST(Softmax, NonContiguousInputs) {
  // Transposed and strided views reach the kernel without a copy; results must not change.
  Tensor base = random({6, 9}, 11);
  std::vector<Tensor> views = {base.t(), base.slice(1, 1, 9, 2), base.t().slice(0, 0, 9, 3)};
  for (const Tensor& v : views)
    for (int64_t d : {0, 1}) {
      Tensor c = v.contiguous();
      EXPECT_TRUE(all_close(softmax(v, d), softmax(c, d), 0, 0));
      EXPECT_TRUE(all_close(log_softmax(v, d), log_softmax(c, d), 0, 0));
      EXPECT_TRUE(all_close(logsumexp(v, d), logsumexp(c, d), 0, 0));
      EXPECT_TRUE(all_close(softmax(v, d), map_rows(v, d, v.size(d), ref_softmax), 1e-14, 1e-12));
    }
}

TEST(Softmax, Float32AgreesWithFloat64) {
  Tensor x = random({5, 37}, 3) * 4.0;
  Tensor xf = x.to(DType::Float32);
  EXPECT_EQ(softmax(xf).dtype(), DType::Float32);
  EXPECT_TRUE(all_close(softmax(xf), softmax(x), 1e-7, 1e-5));
  EXPECT_TRUE(all_close(log_softmax(xf), log_softmax(x), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(logsumexp(xf, 0), logsumexp(x, 0), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(softmax(xf.t(), 1), softmax(x.t(), 1), 1e-7, 1e-5));
}

TEST(Softmax, StableForLargeAndInfiniteLogits) {
  Tensor x = random({3, 8}, 4);
  Tensor big = x + 1000.0;  // exp would overflow without the max subtracted
  EXPECT_TRUE(all_close(softmax(big), softmax(x), 1e-12, 1e-9));
  EXPECT_TRUE(all_close(logsumexp(big) - 1000.0, logsumexp(x), 1e-9, 1e-9));
  EXPECT_TRUE(all_close(softmax(big.to(DType::Float32)), softmax(x), 1e-6, 1e-4));

  // -inf entries (masked attention) get probability 0; the other entries still sum to 1.
  double inf = std::numeric_limits<double>::infinity();
  Tensor m = from_vector(std::vector<double>{-inf, 1.0, -inf, 2.0}, {1, 4});
  std::vector<double> p = softmax(m).to_vector<double>();
  EXPECT_EQ(p[0], 0.0);
  EXPECT_EQ(p[2], 0.0);
  EXPECT_NEAR(p[1] + p[3], 1.0, 1e-15);
  EXPECT_NEAR(p[3] / p[1], std::exp(1.0), 1e-12);
  EXPECT_NEAR(logsumexp(m).item(), std::log(std::exp(1.0) + std::exp(2.0)), 1e-14);
  EXPECT_EQ(logsumexp(full({3}, -inf, DType::Float64)).item(), -inf);
  EXPECT_TRUE(std::isnan(logsumexp(from_vector(std::vector<double>{NAN, 1.0})).item()));
}

TEST(Softmax, ZeroDimAndEmpty) {
  EXPECT_DOUBLE_EQ(softmax(scalar(3.0, DType::Float64)).item(), 1.0);
  EXPECT_DOUBLE_EQ(log_softmax(scalar(3.0, DType::Float64)).item(), 0.0);
  EXPECT_DOUBLE_EQ(logsumexp(scalar(3.0, DType::Float64)).item(), 3.0);
  EXPECT_EQ(softmax(zeros({0, 4}), 1).shape(), (Shape{0, 4}));
}

TEST(Softmax, Gradcheck) {
  auto sq = [](const Tensor& y) { return y * y; };  // a nonlinear read-out so the Jacobian is not degenerate
  std::vector<std::pair<Tensor, int64_t>> inputs = {
      {random({3, 4}, 21), 1}, {random({3, 4}, 22), 0}, {transposed_random({3, 4}, 23), 1},
      {random({2, 3, 2}, 24), 1}, {random({5}, 25), -1}, {random({2, 6}, 26).slice(1, 0, 6, 2), 0}};
  for (auto& [x, d] : inputs) {
    SCOPED_TRACE(to_string(x.shape()) + " dim " + std::to_string(d));
    int64_t dd = d;
    EXPECT_TRUE(grad_ok([dd](const std::vector<Tensor>& a) { return softmax(a[0], dd); }, {x}));
    EXPECT_TRUE(grad_ok([dd](const std::vector<Tensor>& a) { return log_softmax(a[0], dd); }, {x}));
    EXPECT_TRUE(grad_ok([dd](const std::vector<Tensor>& a) { return logsumexp(a[0], dd); }, {x}));
    EXPECT_TRUE(grad_ok([dd](const std::vector<Tensor>& a) { return logsumexp(a[0], dd, true); }, {x}));
    EXPECT_TRUE(grad_ok([dd, sq](const std::vector<Tensor>& a) { return sq(softmax(a[0], dd)); }, {x}));
  }
}

// Grad of grad: gradcheck the gradient itself (its VJP and JVP are the second derivatives).
TEST(Softmax, GradOfGrad) {
  Tensor c = random({3, 4}, 31);
  Tensor x = random({3, 4}, 32);
  std::vector<std::function<Tensor(const Tensor&)>> fs = {
      [c](const Tensor& v) { return sum(softmax(v, 1) * c); },
      [c](const Tensor& v) { return sum(log_softmax(v, 0) * c); },
      [c](const Tensor& v) { return sum(logsumexp(v, 1) * c.slice(1, 0, 1).squeeze(1)); },
  };
  for (auto& f : fs) EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {x}));
  EXPECT_TRUE(grad_ok([f = fs[0]](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {transposed_random({3, 4}, 33)}));
}

// A Hessian-vector product, by reverse over reverse, against central differences of the gradient.
TEST(Softmax, HessianVectorProductMatchesFiniteDifferences) {
  Tensor c = random({2, 5}, 41), x = random({2, 5}, 42), v = random({2, 5}, 43);
  auto f = [c](const Tensor& z) { return sum(log_softmax(z, 1) * c) + sum(softmax(z, 0) * softmax(z, 0)); };
  auto hvp = [&](const Tensor& z) { return grad([&](const Tensor& w) { return sum(grad(f)(w) * v); })(z); };
  double eps = 1e-5;
  Tensor fd = (grad(f)(x + v * eps) - grad(f)(x - v * eps)) / (2 * eps);
  Tensor h = hvp(x);
  EXPECT_TRUE(all_close(h, fd, 1e-7, 1e-6));
  EXPECT_GT(sum(h * h).item(), 1e-3);  // not trivially zero
}

TEST(Softmax, BadInput) {
  Tensor ids = arange(6).reshape({2, 3});
  EXPECT_EMBER_ERROR(softmax(ids), "softmax: expected a float32 or float64 tensor, got int64");
  EXPECT_EMBER_ERROR(log_softmax(ids), "log_softmax");
  EXPECT_EMBER_ERROR(logsumexp(ids), "logsumexp");
  Tensor x = random({2, 3}, 5);
  EXPECT_EMBER_ERROR(softmax(x, 2), "softmax: dim 2 is out of range");
  EXPECT_EMBER_ERROR(log_softmax(x, -3), "log_softmax: dim -3 is out of range");
  EXPECT_EMBER_ERROR(logsumexp(x, 5, true), "logsumexp: dim 5");
  EXPECT_EMBER_ERROR(softmax(Tensor()), "softmax: input is undefined");
}
