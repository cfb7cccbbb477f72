// flip, roll, repeat, tril/triu, pad, eye, linspace: values against index loops, gradients
// (gradcheck, and the exact adjoints of tiling and padding), bad input.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

TEST(Rearrange, FlipAndRollMoveElementsAsIndexed) {
  Tensor x = random({3, 4}, 701);
  Tensor f = flip(x, {0, -1});
  Tensor r = roll(x, 1, 1), back = roll(x, -5, 1);  // -5 mod 4 = 3
  for_each_index(x.shape(), [&](const Shape& i) {
    EXPECT_EQ(f.at(i), x.at({2 - i[0], 3 - i[1]}));
    EXPECT_EQ(r.at(i), x.at({i[0], (i[1] + 3) % 4}));
    EXPECT_EQ(back.at(i), x.at({i[0], (i[1] + 1) % 4}));
  });
  EXPECT_TRUE(all_close(roll(x, 4, 1), x, 0, 0));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return flip(v[0], {1}) * v[0]; }, {x}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return roll(v[0].transpose(0, 1), 2, 0); }, {x}));
  EXPECT_EMBER_ERROR(flip(x, {1, -1}), "flip: dim 1 appears twice");
  EXPECT_EMBER_ERROR(roll(x, 1, 2), "roll");
}

TEST(Rearrange, RepeatTilesAndItsGradientSumsTheTiles) {
  Tensor x = random({2, 3}, 702);
  Tensor y = repeat(x, {2, 1, 2});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 6}));
  for_each_index(y.shape(), [&](const Shape& i) { EXPECT_EQ(y.at(i), x.at({i[1] % 2, i[2] % 3})); });
  Tensor g = grad([](const Tensor& v) { return sum(repeat(v, {3, 2})); })(x);
  EXPECT_EQ(g.to_vector<double>(), std::vector<double>(6, 6.0));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return repeat(v[0], {2, 2}); }, {x}));
  EXPECT_EMBER_ERROR(repeat(x, {2}), "repeat: 1 repeats for a tensor of shape [2, 3]");
  EXPECT_EMBER_ERROR(repeat(x, {1, -1}), "repeat: negative repeat count");
}

TEST(Rearrange, TrilTriuKeepTheirTriangles) {
  Tensor x = random({2, 3, 4}, 703);
  for (int64_t k : {-1, 0, 2}) {
    Tensor lo = tril(x, k), up = triu(x, k);
    for_each_index(x.shape(), [&](const Shape& i) {
      EXPECT_EQ(lo.at(i), i[2] - i[1] <= k ? x.at(i) : 0.0);
      EXPECT_EQ(up.at(i), i[2] - i[1] >= k ? x.at(i) : 0.0);
    });
  }
  Tensor g = grad([](const Tensor& v) { return sum(tril(v)); })(random({2, 2}, 1));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EMBER_ERROR(tril(random({3}, 1)), "tril: expected a tensor with at least 2 dims, got [3]");
}

TEST(Rearrange, PadConstantAndReflect) {
  Tensor x = random({2, 4}, 704);
  Tensor c = pad(x, {1, 2}, PadMode::Constant, -3.0);
  EXPECT_EQ(c.shape(), (Shape{2, 7}));
  for_each_index(c.shape(), [&](const Shape& i) {
    EXPECT_EQ(c.at(i), i[1] >= 1 && i[1] < 5 ? x.at({i[0], i[1] - 1}) : -3.0);
  });
  // Reflect in both dims: [2, 4] padded by (2, 3) in the last and (1, 1) in the first.
  Tensor r = pad(x, {2, 3, 1, 1}, PadMode::Reflect);
  EXPECT_EQ(r.shape(), (Shape{4, 9}));
  auto reflect = [](int64_t i, int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); };
  for_each_index(r.shape(), [&](const Shape& i) {
    EXPECT_EQ(r.at(i), x.at({reflect(i[0] - 1, 2), reflect(i[1] - 2, 4)}));
  });
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return pad(v[0], {2, 1}, PadMode::Reflect); }, {x}));
  Tensor g = grad([](const Tensor& v) { return sum(pad(v, {1, 1, 2, 0})); })(x);
  EXPECT_EQ(g.to_vector<double>(), std::vector<double>(8, 1.0));
  EXPECT_EMBER_ERROR(pad(x, {-1, 0}), "pad (constant): negative padding -1, 0 for dim 1 of shape [2, 4]");
  EXPECT_EMBER_ERROR(pad(x, {4, 0}, PadMode::Reflect), "pad (reflect): padding 4, 0 must be below the size 4 of dim 1");
  EXPECT_EMBER_ERROR(pad(x, {1}), "pad (constant): 1 pad sizes for a tensor of shape [2, 4]");
  EXPECT_EMBER_ERROR(pad(x, {1, 1, 1, 1, 1, 1}), "pad (constant): 6 pad sizes");
}

TEST(Rearrange, EyeAndLinspace) {
  Tensor e = eye(2, 3, DType::Float64);
  EXPECT_EQ(e.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(eye(3).shape(), (Shape{3, 3}));
  EXPECT_EQ(eye(3).dtype(), DType::Float32);
  EXPECT_EQ(eye(2, -1, DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  Tensor l = linspace(-1, 2, 7, DType::Float64);
  std::vector<double> v = l.to_vector<double>();
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v.front(), -1.0);
  EXPECT_EQ(v.back(), 2.0);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], -1 + 0.5 * double(i), 1e-15);
  EXPECT_EQ(linspace(0.1, 0.3, 3, DType::Float64).to_vector<double>().back(), 0.3);
  EXPECT_EQ(linspace(5, 9, 1, DType::Float64).to_vector<double>(), (std::vector<double>{5}));
  EXPECT_EQ(linspace(5, 9, 0).numel(), 0);
  EXPECT_EMBER_ERROR(linspace(0, 1, -2), "linspace: steps must be non-negative, got -2");
  EXPECT_EMBER_ERROR(eye(-1), "eye: sizes must be non-negative");
}
