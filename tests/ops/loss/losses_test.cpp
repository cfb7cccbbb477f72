// The losses of ops/loss/losses.h against float64 loops, every reduction, gradcheck (and grad of
// grad for the smooth ones), numerical stability at extreme inputs, and bad input.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

double mean_of(const Tensor& t) { return sum(t).item() / double(t.numel()); }

// Each reduction of `f` against the elementwise reference `per`.
void expect_reductions(const std::function<Tensor(Reduction)>& f, const Tensor& per, double tol = 1e-12) {
  EXPECT_TRUE(all_close(f(Reduction::None), per, tol, tol));
  EXPECT_NEAR(f(Reduction::Sum).item(), sum(per).item(), tol * double(per.numel()));
  EXPECT_NEAR(f(Reduction::Mean).item(), mean_of(per), tol);
  EXPECT_EQ(f(Reduction::Mean).dim(), 0);
}

}  // namespace

TEST(Losses, RegressionLossesMatchTheirFormulas) {
  Tensor a = random({3, 5}, 501), b = random({3, 5}, 502);
  expect_reductions([&](Reduction r) { return mse_loss(a, b, r); }, ref_binary(a, b, [](double x, double y) { return (x - y) * (x - y); }));
  expect_reductions([&](Reduction r) { return l1_loss(a, b, r); }, ref_binary(a, b, [](double x, double y) { return std::fabs(x - y); }));
  for (double beta : {1.0, 0.3}) {
    auto ref = [beta](double x, double y) {
      double d = std::fabs(x - y);
      return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
    };
    expect_reductions([&](Reduction r) { return smooth_l1_loss(a, b, r, beta); }, ref_binary(a, b, ref));
  }
  EXPECT_DOUBLE_EQ(mse_loss(a, b).item(), mean(square(a - b)).item());
  for (auto loss : {mse_loss, l1_loss})
    EXPECT_TRUE(grad_ok([loss](const std::vector<Tensor>& v) { return loss(v[0], v[1], Reduction::Mean); }, {a, b}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return smooth_l1_loss(v[0], v[1], Reduction::Sum, 0.5); }, {a, b}));
}

TEST(Losses, NllLossIgnoresTheIgnoreIndexInSumAndCount) {
  Tensor lp = log_softmax(random({4, 3}, 503), -1);
  Tensor t = from_vector(std::vector<int64_t>{2, -100, 0, 1});
  double want = -(lp.at({0, 2}) + lp.at({2, 0}) + lp.at({3, 1}));
  EXPECT_NEAR(nll_loss(lp, t, Reduction::Sum).item(), want, 1e-14);
  EXPECT_NEAR(nll_loss(lp, t).item(), want / 3, 1e-14);
  std::vector<double> none = nll_loss(lp, t, Reduction::None).to_vector<double>();
  EXPECT_EQ(none[1], 0.0);
  EXPECT_DOUBLE_EQ(none[3], -lp.at({3, 1}));
  EXPECT_NEAR(nll_loss(lp, from_vector(std::vector<int64_t>{2, 5, 0, 1}), Reduction::Mean, 5).item(), want / 3, 1e-14);
  EXPECT_DOUBLE_EQ(nll_loss(lp.reshape({12}).slice(0, 0, 3), full({}, 1.0, DType::Int64)).item(), -lp.at({0, 1}));
  EXPECT_TRUE(grad_ok([t](const std::vector<Tensor>& v) { return nll_loss(v[0], t); }, {lp}));
  EXPECT_EMBER_ERROR(nll_loss(lp, from_vector(std::vector<int64_t>{0, 3, 0, 1})),
                     "nll_loss: target 3 is out of range for 3 classes (input shape [4, 3])");
  EXPECT_EMBER_ERROR(nll_loss(lp, from_vector(std::vector<int64_t>{0, 1})), "nll_loss: input of shape [4, 3] needs (N, C)");
  EXPECT_EMBER_ERROR(nll_loss(lp, random({4}, 1)), "nll_loss: target must be int64 class indices");
}

TEST(Losses, BinaryCrossEntropyAndItsLogitsFormAgree) {
  Tensor x = random({3, 4}, 504), t = random({3, 4}, 505, true) / 2.0 - 0.25;  // soft targets in [0, 0.75]
  Tensor p = sigmoid(x);
  Tensor per = ref_binary(p, t, [](double q, double y) { return -(y * std::log(q) + (1 - y) * std::log(1 - q)); });
  expect_reductions([&](Reduction r) { return binary_cross_entropy(p, t, r); }, per, 1e-12);
  expect_reductions([&](Reduction r) { return binary_cross_entropy_with_logits(x, t, r); }, per, 1e-12);
  EXPECT_TRUE(grad_ok([t](const std::vector<Tensor>& v) { return binary_cross_entropy_with_logits(v[0], t); }, {x}));
  EXPECT_TRUE(grad_ok([t](const std::vector<Tensor>& v) { return binary_cross_entropy(v[0], t); }, {p}));
  // The logits' gradient is (sigmoid(x) - t) / n, even where sigmoid rounds to 0 or 1.
  Tensor big = from_vector(std::vector<double>{-800, -40, 40, 800}), y = from_vector(std::vector<double>{1, 1, 0, 0.5});
  Tensor l = binary_cross_entropy_with_logits(big, y, Reduction::None);
  EXPECT_EQ(l.to_vector<double>(), (std::vector<double>{800, 40, 40, 400}));
  Tensor g = grad([y](const Tensor& v) { return sum(binary_cross_entropy_with_logits(v, y, Reduction::None)); })(big);
  EXPECT_TRUE(all_close(g, sigmoid(big) - y, 1e-15, 0));
  // Probabilities of exactly 0 and 1: each log is clamped at -100.
  Tensor edge = binary_cross_entropy(from_vector(std::vector<double>{0, 1}), from_vector(std::vector<double>{1, 1}), Reduction::None);
  EXPECT_EQ(edge.to_vector<double>(), (std::vector<double>{100, 0}));
  EXPECT_EMBER_ERROR(binary_cross_entropy(from_vector(std::vector<double>{1.5}), from_vector(std::vector<double>{1})),
                     "binary_cross_entropy: input 1.5 is not a probability in [0, 1]");
  EXPECT_EMBER_ERROR(binary_cross_entropy_with_logits(x, random({4, 3}, 1)),
                     "binary_cross_entropy_with_logits: input of shape [3, 4] and target of shape [4, 3] must match");
  EXPECT_EMBER_ERROR(mse_loss(x, t.to(DType::Float32)), "mse_loss: input is float64 but target is float32");
}

TEST(Losses, CrossEntropyWithLabelSmoothingAndIgnoreIndex) {
  Tensor logits = random({5, 4}, 506);
  Tensor t = from_vector(std::vector<int64_t>{3, 0, 7, 2, 1});  // 7 is ignored below
  const double s = 0.2;
  Tensor lp = log_softmax(logits, -1);
  double total = 0;
  int kept = 0;
  for (int64_t i = 0; i < 5; ++i) {
    int64_t c = int64_t(t.at({i}));
    if (c == 7) continue;
    double uniform = 0;
    for (int64_t k = 0; k < 4; ++k) uniform -= lp.at({i, k}) / 4;
    total += (1 - s) * -lp.at({i, c}) + s * uniform;
    ++kept;
  }
  CrossEntropyOptions o;
  o.ignore_index = 7;
  o.label_smoothing = s;
  EXPECT_NEAR(cross_entropy(logits, t, o).item(), total / kept, 1e-14);
  o.reduction = Reduction::Sum;
  EXPECT_NEAR(cross_entropy(logits, t, o).item(), total, 1e-13);
  o.reduction = Reduction::None;
  Tensor per = cross_entropy(logits, t, o);
  EXPECT_EQ(per.shape(), (Shape{5}));
  EXPECT_EQ(per.at({2}), 0.0);
  // The defaults are the plain loss (the fused primitive), and so is smoothing 0 without ignored targets.
  Tensor ok = from_vector(std::vector<int64_t>{3, 0, 1, 2, 1});
  EXPECT_DOUBLE_EQ(cross_entropy(logits, ok, CrossEntropyOptions{}).item(), cross_entropy(logits, ok).item());
  CrossEntropyOptions sum_only;
  sum_only.reduction = Reduction::Sum;
  EXPECT_NEAR(cross_entropy(logits, ok, sum_only).item(), 5 * cross_entropy(logits, ok).item(), 1e-13);
  // (..., C) logits keep their leading shape under Reduction::None.
  EXPECT_EQ(cross_entropy(random({2, 3, 4}, 507), zeros({2, 3}, DType::Int64), o).shape(), (Shape{2, 3}));
  CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  smooth.ignore_index = 7;
  EXPECT_TRUE(grad_ok([t, smooth](const std::vector<Tensor>& v) { return cross_entropy(v[0], t, smooth); }, {logits}));
  smooth.label_smoothing = 1.5;
  EXPECT_EMBER_ERROR(cross_entropy(logits, t, smooth), "cross_entropy: label_smoothing must lie in [0, 1], got 1.5");
  EXPECT_EMBER_ERROR(cross_entropy(logits, from_vector(std::vector<int64_t>{0, 1}), sum_only),
                     "cross_entropy: logits [5, 4] need targets of shape [5]");
}
