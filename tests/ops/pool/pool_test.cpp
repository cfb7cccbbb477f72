// Pooling beyond the op table: max_pool2d's ties and NaN, and the composite avg_pool2d and
// adaptive_avg_pool2d against loop references, with gradcheck and their errors.
#include <cmath>
#include <limits>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// Means over windows [lo(i), hi(i)) x [lo(j), hi(j)) given by two window functions.
Tensor ref_window_mean(const Tensor& x, int64_t oh, int64_t ow, const std::function<std::pair<int64_t, int64_t>(int64_t, int64_t, int64_t)>& win,
                       bool divide_by_kernel, int64_t kernel_area) {
  Tensor y = zeros({x.size(0), x.size(1), oh, ow}, DType::Float64);
  for (int64_t n = 0; n < x.size(0); ++n)
    for (int64_t c = 0; c < x.size(1); ++c)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          auto [y0, y1] = win(i, oh, x.size(2));
          auto [x0, x1] = win(j, ow, x.size(3));
          double s = 0;
          int64_t count = 0;
          for (int64_t a = y0; a < y1; ++a)
            for (int64_t b = x0; b < x1; ++b) {
              ++count;
              if (a >= 0 && a < x.size(2) && b >= 0 && b < x.size(3)) s += x.at({n, c, a, b});
            }
          y.set({n, c, i, j}, s / double(divide_by_kernel ? kernel_area : count));
        }
  return y;
}

}  // namespace

TEST(MaxPool2d, TiesSendTheGradientToTheFirstMaximum) {
  // Every window holds equal values: PyTorch sends each window's gradient to its top-left.
  Tensor x = full({1, 1, 4, 4}, 3.0, DType::Float64);
  x.requires_grad_();
  sum(max_pool2d(x, {2, 2}) * from_vector(std::vector<double>{1, 2, 3, 4}, {1, 1, 2, 2})).backward();
  std::vector<double> expect = {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0};
  EXPECT_EQ(x.grad().to_vector<double>(), expect);
  // Overlapping windows (stride 1): a shared maximum collects every window's gradient.
  Tensor z = from_vector(std::vector<double>{0, 5, 5, 0, 0, 0}, {1, 1, 2, 3});
  z.requires_grad_();
  sum(max_pool2d(z, {2, 2}, {1, 1})).backward();
  EXPECT_EQ(z.grad().to_vector<double>(), (std::vector<double>{0, 2, 0, 0, 0, 0}));
}

TEST(MaxPool2d, NanPropagatesAndPaddingIsNeverTheMaximum) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_vector(std::vector<double>{1, nan, 2, 3}, {1, 1, 2, 2});
  EXPECT_TRUE(std::isnan(max_pool2d(x, {2, 2}).item()));
  Tensor neg = full({1, 1, 2, 2}, -7.0, DType::Float64);
  Tensor y = max_pool2d(neg, {2, 2}, {2, 2}, {1, 1});  // windows that are mostly padding
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{-7, -7, -7, -7}));
}

TEST(MaxPool2d, Float32MatchesFloat64AndTheFusedBackwardTheComposite) {
  Tensor x = random({3, 4, 9, 10}, 20);
  Tensor y64 = max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
  EXPECT_TRUE(all_close(max_pool2d(x.to(DType::Float32), {3, 3}, {2, 2}, {1, 1}).to(DType::Float64), y64, 1e-6, 1e-6));
}

TEST(AvgPool2d, MatchesReferenceCountingPaddingAndPassesGradcheck) {
  Tensor x = random({2, 3, 7, 6}, 21);
  for (auto [k, s, p] : {std::tuple<Pair, Pair, Pair>{{2, 2}, {0, 0}, {0, 0}}, {{3, 2}, {2, 1}, {1, 1}}, {{3, 3}, {3, 3}, {1, 0}}}) {
    SCOPED_TRACE(std::to_string(k[0]) + "x" + std::to_string(k[1]));
    Pair st = s[0] == 0 ? k : s;
    int64_t oh = (7 + 2 * p[0] - k[0]) / st[0] + 1, ow = (6 + 2 * p[1] - k[1]) / st[1] + 1;
    Tensor ref = ref_window_mean(
        x, oh, ow, [&](int64_t i, int64_t, int64_t size) {
          const bool rows = size == 7;
          int64_t lo = i * st[rows ? 0 : 1] - p[rows ? 0 : 1];
          return std::pair<int64_t, int64_t>{lo, lo + k[rows ? 0 : 1]};
        },
        true, k[0] * k[1]);
    EXPECT_TRUE(all_close(avg_pool2d(x, k, s, p), ref, 1e-12, 1e-10));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return avg_pool2d(a[0], k, s, p); }, {x}));
  }
  EXPECT_EMBER_ERROR(avg_pool2d(x, {2, 2}, {1, 1}, {2, 0}), "avg_pool2d: padding must be >= 0 and at most half");
  EXPECT_EMBER_ERROR(avg_pool2d(random({7, 6}, 1), {2, 2}), "avg_pool2d: expected a 4-d input");
}

TEST(AdaptiveAvgPool2d, CoversUnevenWindowsAsPyTorchAndPassesGradcheck) {
  Tensor x = random({2, 3, 7, 5}, 22);
  for (Pair out : {Pair{3, 2}, Pair{1, 1}, Pair{7, 5}, Pair{4, 8}}) {
    SCOPED_TRACE(std::to_string(out[0]) + "x" + std::to_string(out[1]));
    Tensor ref = ref_window_mean(
        x, out[0], out[1],
        [](int64_t i, int64_t o, int64_t size) {
          return std::pair<int64_t, int64_t>{i * size / o, ((i + 1) * size + o - 1) / o};
        },
        false, 0);
    EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, out), ref, 1e-12, 1e-10));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return adaptive_avg_pool2d(a[0], out); }, {x}));
  }
  EXPECT_EMBER_ERROR(adaptive_avg_pool2d(x, {0, 2}), "adaptive_avg_pool2d: the output size must be positive, got [0, 2]");
}
