#include <cmath>

#include "ops/dropout/dropout.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(Dropout, IdentityWhenNotTrainingOrPZero) {
  Tensor x = random({3, 4}, 400);
  EXPECT_EQ(dropout(x, 0.5, false).impl(), x.impl());
  EXPECT_EQ(dropout(x, 0.0, true).impl(), x.impl());
}

TEST(Dropout, DeterministicForASeed) {
  Tensor x = random({16, 33}, 401);
  Generator a(7), b(7), c(8);
  Tensor ya = dropout(x, 0.3, true, &a), yb = dropout(x, 0.3, true, &b), yc = dropout(x, 0.3, true, &c);
  EXPECT_TRUE(all_close(ya, yb, 0, 0));
  EXPECT_FALSE(all_close(ya, yc, 0, 0));
  // The generator advances: a second call draws a different mask.
  EXPECT_FALSE(all_close(dropout(x, 0.3, true, &a), ya, 0, 0));
  // The default generator repeats after manual_seed.
  manual_seed(99);
  Tensor d1 = dropout(x, 0.3);
  manual_seed(99);
  EXPECT_TRUE(all_close(dropout(x, 0.3), d1, 0, 0));
}

TEST(Dropout, MaskIndependentOfLayoutAndDtype) {
  Tensor x = random({9, 7}, 402).t();  // non-contiguous (7, 9)
  Generator a(3), b(3), c(3);
  Tensor y = dropout(x, 0.5, true, &a);
  EXPECT_TRUE(all_close(y, dropout(x.contiguous(), 0.5, true, &b), 0, 0));
  Tensor yf = dropout(x.to(DType::Float32), 0.5, true, &c);
  EXPECT_EQ(yf.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(yf, y, 1e-6, 1e-6));
}

TEST(Dropout, KeptValuesScaledAndStatistics) {
  const int64_t n = 40000;
  for (double p : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE(p);
    Tensor x = random({n}, 403, true);  // in [0.5, 2): never exactly zero
    Generator g(11);
    Tensor y = dropout(x, p, true, &g);
    std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
    int64_t dropped = 0;
    double mean_ratio = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (yv[size_t(i)] == 0) ++dropped;
      else EXPECT_NEAR(yv[size_t(i)], xv[size_t(i)] / (1 - p), 1e-12);
      mean_ratio += yv[size_t(i)] / xv[size_t(i)];
    }
    double sigma = std::sqrt(p * (1 - p) / double(n));
    EXPECT_NEAR(double(dropped) / double(n), p, 5 * sigma);
    // E[y / x] = 1: inverted dropout keeps the expectation.
    EXPECT_NEAR(mean_ratio / double(n), 1.0, 5 * sigma / (1 - p));
  }
  // No long runs of one outcome: neighbouring elements are independent draws.
  Generator g(12);
  std::vector<double> yv = dropout(ones({n}, DType::Float64), 0.5, true, &g).to_vector<double>();
  int64_t changes = 0;
  for (size_t i = 1; i < yv.size(); ++i) changes += (yv[i] == 0) != (yv[i - 1] == 0);
  EXPECT_NEAR(double(changes) / double(n - 1), 0.5, 5 * std::sqrt(0.25 / double(n)));
}

TEST(Dropout, GradientUsesTheForwardMask) {
  Tensor x = random({5, 6}, 404, true);
  Generator g(21);
  auto [y, vjp] = make_vjp([&](const Tensor& t) { return dropout(t, 0.4, true, &g); }, x);
  Tensor gx = vjp(ones({5, 6}, DType::Float64));
  std::vector<double> yv = y.to_vector<double>(), gv = gx.to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_DOUBLE_EQ(gv[i], yv[i] == 0 ? 0.0 : 1 / 0.6);
  // Training style: backward() on a requires_grad_ leaf sees the same mask.
  Generator g2(21);
  Tensor leaf = x.clone().requires_grad_();
  sum(dropout(leaf, 0.4, true, &g2)).backward();
  EXPECT_TRUE(all_close(leaf.grad(), gx, 0, 0));
}

TEST(Dropout, Gradcheck) {
  // A fresh generator per call keeps the function deterministic across gradcheck's evaluations.
  auto f = [](const std::vector<Tensor>& a) {
    Generator g(5);
    return dropout(a[0], 0.35, true, &g);
  };
  EXPECT_TRUE(grad_ok(f, {random({3, 5}, 405)}));
  EXPECT_TRUE(grad_ok(f, {random({5, 3}, 406).t()}));
  auto loss = [](const Tensor& t) {
    Generator g(6);
    return sum(square(dropout(t, 0.5, true, &g)) * t);
  };
  EXPECT_TRUE(grad_ok([loss](const std::vector<Tensor>& a) { return grad(loss)(a[0]); }, {random({2, 7}, 407)}));
}

TEST(Dropout, BadInput) {
  Tensor x = random({2, 2}, 408);
  EXPECT_EMBER_ERROR(dropout(x, 1.0), "dropout: p must lie in [0, 1), got 1");
  EXPECT_EMBER_ERROR(dropout(x, -0.1), "dropout: p must lie in [0, 1), got -0.1");
  EXPECT_EMBER_ERROR(dropout(x, 1.5, false), "dropout: p must lie in [0, 1)");
  EXPECT_EMBER_ERROR(dropout(x, NAN), "dropout: p must lie in [0, 1)");
  EXPECT_EMBER_ERROR(dropout(arange(4), 0.5), "dropout: expected a float32 or float64 input, got int64");
}
