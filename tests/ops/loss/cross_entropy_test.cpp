#include <cmath>

#include "ops/loss/cross_entropy.h"
#include "ops/row_reference.h"
#include "ops/softmax/softmax.h"

using namespace ember;
using namespace ember::testing;

namespace {

// mean over rows of log(sum exp(row)) - row[target], in float64 with the max subtracted.
double ref_cross_entropy(const Tensor& logits, const Tensor& targets) {
  Tensor lse = map_rows(logits, -1, 1, [](const std::vector<double>& r) {
    double m = r[0], s = 0;
    for (double v : r) m = std::max(m, v);
    for (double v : r) s += std::exp(v - m);
    return std::vector<double>{m + std::log(s)};
  });
  std::vector<double> l = lse.to_vector<double>();
  std::vector<int64_t> t = targets.to_vector<int64_t>();
  Tensor flat = logits.contiguous().reshape({-1, logits.size(-1)});
  double total = 0;
  for (size_t i = 0; i < t.size(); ++i) total += l[i] - flat.at({int64_t(i), t[i]});
  return total / double(t.size());
}

}  // namespace

TEST(CrossEntropy, MatchesFloat64Reference) {
  uint64_t seed = 200;
  for (Shape s : {Shape{1, 1}, Shape{1, 7}, Shape{7, 3}, Shape{33, 10}, Shape{4, 127}, Shape{2, 3, 5}, Shape{6}}) {
    SCOPED_TRACE(to_string(s));
    Tensor x = random(s, seed++) * 3.0;
    Generator g(seed++);
    Shape ts(s.begin(), s.end() - 1);
    Tensor t = randint(ts, 0, s.back(), &g);
    Tensor loss = cross_entropy(x, t);
    EXPECT_EQ(loss.dim(), 0);
    EXPECT_NEAR(loss.item(), ref_cross_entropy(x, t), 1e-12);
  }
}

TEST(CrossEntropy, NonContiguousAndFloat32) {
  Tensor x = transposed_random({5, 9}, 210);
  Tensor t = from_vector(std::vector<int64_t>{0, 8, 3, 4, 4});
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_NEAR(cross_entropy(x, t).item(), ref_cross_entropy(x, t), 1e-12);
  EXPECT_DOUBLE_EQ(cross_entropy(x, t).item(), cross_entropy(x.contiguous(), t).item());
  // Strided targets too.
  Tensor t2 = from_vector(std::vector<int64_t>{0, 9, 8, 9, 3, 9, 4, 9, 4, 9}).slice(0, 0, 10, 2);
  EXPECT_DOUBLE_EQ(cross_entropy(x, t2).item(), cross_entropy(x, t).item());
  Tensor loss32 = cross_entropy(x.to(DType::Float32), t);
  EXPECT_EQ(loss32.dtype(), DType::Float32);
  EXPECT_NEAR(loss32.item(), ref_cross_entropy(x, t), 1e-5);
  // Huge logits stay finite.
  Tensor big = x * 1000.0;
  EXPECT_NEAR(cross_entropy(big.to(DType::Float32), t).item(), ref_cross_entropy(big, t), 1e-2);
}

TEST(CrossEntropy, EqualsNegatedMeanOfLogSoftmax) {
  Tensor x = random({4, 6}, 220);
  Tensor t = from_vector(std::vector<int64_t>{5, 0, 2, 2});
  Tensor picked = log_softmax(x);
  double m = 0;
  for (int64_t i = 0; i < 4; ++i) m -= picked.at({i, t.to_vector<int64_t>()[size_t(i)]});
  EXPECT_NEAR(cross_entropy(x, t).item(), m / 4, 1e-14);
}

TEST(CrossEntropy, Gradcheck) {
  Generator g(230);
  std::vector<std::pair<Tensor, Tensor>> cases = {
      {random({3, 4}, 231), randint({3}, 0, 4, &g)},
      {transposed_random({3, 4}, 232), randint({3}, 0, 4, &g)},
      {random({2, 2, 3}, 233), randint({2, 2}, 0, 3, &g)},
      {random({1, 5}, 234), randint({1}, 0, 5, &g)},
      {random({4}, 235), arange(3, 4).reshape({})}};  // one row of logits, a 0-d target
  for (auto& [x, t] : cases) {
    SCOPED_TRACE(to_string(x.shape()));
    Tensor tt = t;
    EXPECT_TRUE(grad_ok([tt](const std::vector<Tensor>& a) { return cross_entropy(a[0], tt); }, {x}));
  }
}

TEST(CrossEntropy, GradientIsSoftmaxMinusOneHotOverN) {
  Tensor x = random({3, 5}, 240);
  Tensor t = from_vector(std::vector<int64_t>{4, 1, 1});
  Tensor gx = grad([&](const Tensor& z) { return cross_entropy(z, t); })(x);
  Tensor p = softmax(x);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 5; ++c) {
      double want = (p.at({i, c}) - (c == t.to_vector<int64_t>()[size_t(i)] ? 1.0 : 0.0)) / 3.0;
      EXPECT_NEAR(gx.at({i, c}), want, 1e-15);
    }
}

TEST(CrossEntropy, GradOfGradAndHessianVectorProduct) {
  Tensor x = random({3, 4}, 250), v = random({3, 4}, 251);
  Tensor t = from_vector(std::vector<int64_t>{0, 3, 2});
  auto f = [t](const Tensor& z) { return cross_entropy(z, t); };
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {x}));
  Tensor h = grad([&](const Tensor& z) { return sum(grad(f)(z) * v); })(x);
  double eps = 1e-5;
  Tensor fd = (grad(f)(x + v * eps) - grad(f)(x - v * eps)) / (2 * eps);
  EXPECT_TRUE(all_close(h, fd, 1e-8, 1e-6));
  // Forward over reverse gives the same Hessian-vector product.
  auto [g0, hv] = make_jvp(grad(f), x, v);
  EXPECT_TRUE(all_close(hv, h, 1e-12, 1e-10));
  EXPECT_GT(sum(h * h).item(), 1e-4);
}

TEST(CrossEntropy, BadInput) {
  Tensor x = random({3, 4}, 260);
  EXPECT_EMBER_ERROR(cross_entropy(x, from_vector(std::vector<int64_t>{0, 4, 1})),
                     "cross_entropy: target 4 at flat index 1 is out of range for 4 classes");
  EXPECT_EMBER_ERROR(cross_entropy(x, from_vector(std::vector<int64_t>{0, -1, 1})), "target -1");
  EXPECT_EMBER_ERROR(cross_entropy(x, from_vector(std::vector<int64_t>{0, 1})),
                     "cross_entropy: logits [3, 4] need targets of shape [3], got [2]");
  EXPECT_EMBER_ERROR(cross_entropy(x, from_vector(std::vector<double>{0, 1, 2})),
                     "cross_entropy: targets must be int64 class indices, got float64");
  EXPECT_EMBER_ERROR(cross_entropy(arange(12).reshape({3, 4}), arange(3)), "cross_entropy: logits must be float32 or float64");
  EXPECT_EMBER_ERROR(cross_entropy(zeros({0, 4}, DType::Float64), zeros({0}, DType::Int64)), "cross_entropy: no targets");
  EXPECT_EMBER_ERROR(cross_entropy(scalar(1.0, DType::Float64), arange(1)), "non-empty class dim");
  // Also when traced: the check runs before anything is recorded.
  EXPECT_EMBER_ERROR(grad([](const Tensor& z) { return cross_entropy(z, arange(3) + arange(3)); })(x), "target 4");
}
