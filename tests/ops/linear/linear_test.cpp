#include "ops/linear/linear.h"

#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// float64 reference: y[r, o] = sum_i x[r, i] W[o, i] + b[o], element by element.
Tensor ref_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  int64_t in = w.size(1), out = w.size(0), rows = x.numel() / in;
  std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv;
  if (b.defined()) bv = b.to_vector<double>();
  std::vector<double> y(size_t(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = bv.empty() ? 0.0 : bv[size_t(o)];
      for (int64_t i = 0; i < in; ++i) s += xv[size_t(r * in + i)] * wv[size_t(o * in + i)];
      y[size_t(r * out + o)] = s;
    }
  Shape shape = x.shape();
  shape.back() = out;
  return from_vector(y, shape);
}

}  // namespace

TEST(LinearOp, MatchesReferenceOnAwkwardShapes) {
  struct Case { Shape x; int64_t out; };
  for (const Case& c : std::vector<Case>{{{1, 1}, 1}, {{7, 33}, 5}, {{33, 7}, 127}, {{2, 3, 7}, 4}, {{5}, 3}}) {
    Tensor x = random(c.x, 1), w = random({c.out, c.x.back()}, 2), b = random({c.out}, 3);
    EXPECT_TRUE(all_close(linear(x, w, b), ref_linear(x, w, b), 1e-12, 1e-12)) << to_string(c.x);
    EXPECT_TRUE(all_close(linear(x, w), ref_linear(x, w, Tensor()), 1e-12, 1e-12)) << to_string(c.x);
    // float32 agrees with the float64 reference to float32 accuracy
    Tensor y32 = linear(x.to(DType::Float32), w.to(DType::Float32), b.to(DType::Float32));
    EXPECT_EQ(y32.dtype(), DType::Float32);
    EXPECT_TRUE(all_close(y32, ref_linear(x, w, b), 1e-4, 1e-4));
  }
}

TEST(LinearOp, NonContiguousInputAndWeight) {
  Tensor x = random({9, 6}, 4).t();       // (6, 9), transposed view
  Tensor w = random({9, 5}, 5).t();       // (5, 9), transposed view
  Tensor b = random({10}, 6).slice(0, 0, 10, 2);  // stride-2 view of 5 elements
  EXPECT_TRUE(all_close(linear(x, w, b), ref_linear(x.contiguous(), w.contiguous(), b.contiguous()), 1e-12, 1e-12));
}

TEST(LinearOp, GradcheckVjpAndJvp) {
  Tensor x = random({3, 4}, 7), w = random({5, 4}, 8), b = random({5}, 9);
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return linear(a[0], a[1], a[2]); }, {x, w, b}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return linear(a[0], a[1]); }, {x, w}));
  Tensor x3 = random({2, 3, 4}, 10);  // leading batch dims
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return linear(a[0], a[1], a[2]); }, {x3, w, b}));
}

TEST(LinearOp, GradOfGrad) {
  // d/dx of <grad_W sum(tanh(linear)), v> exercises the VJP's own differentiability.
  Tensor x = random({3, 4}, 11), w = random({2, 4}, 12), b = random({2}, 13);
  auto f = [&](const std::vector<Tensor>& a) {
    FnN inner = [&](const std::vector<Tensor>& p) { return sum(tanh(linear(p[0], p[1], p[2]))); };
    return grad(inner, 1)({a[0], a[1], a[2]});
  };
  EXPECT_TRUE(grad_ok(f, {x, w, b}));
}

TEST(LinearOp, EagerBackwardGivesContiguousWeightGradient) {
  Tensor x = random({6, 4}, 14);
  Tensor w = random({3, 4}, 15).requires_grad_();
  Tensor b = random({3}, 16).requires_grad_();
  sum(linear(x, w, b) * linear(x, w, b)).backward();
  Tensor y = ref_linear(x, w.detach(), b.detach());
  // d/dW sum(y^2) = 2 y^T x; d/db = 2 sum_rows y
  EXPECT_TRUE(w.grad().is_contiguous());
  EXPECT_TRUE(all_close(w.grad(), matmul(y.t(), x) * 2.0, 1e-10, 1e-10));
  EXPECT_TRUE(all_close(b.grad(), sum(y, {0}) * 2.0, 1e-10, 1e-10));
}

TEST(LinearOp, RejectsBadShapes) {
  Tensor x = random({3, 4}, 1), w = random({5, 4}, 2);
  EXPECT_EMBER_ERROR(linear(random({3, 5}, 1), w), "in_features 4");
  EXPECT_EMBER_ERROR(linear(x, random({5, 4, 1}, 2)), "weight must be 2-d");
  EXPECT_EMBER_ERROR(linear(x, w, random({4}, 3)), "bias must have shape (5)");
  EXPECT_EMBER_ERROR(linear(x.to(DType::Float32), w), "float32 but the weight is float64");
}

// in_features 0 is a legal (empty) product: the result is the bias, and its gradient flows.
TEST(LinearOp, ZeroInFeaturesGivesTheBias) {
  Tensor x = random({2, 3, 0}, 1), w = random({4, 0}, 2), b = random({4}, 3);
  Tensor y = linear(x, w, b);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(all_close(y, b.expand({2, 3, 4}), 0, 0));
  auto [out, grads] = value_and_grads([](const std::vector<Tensor>& a) { return sum(linear(a[0], a[1], a[2])); })({x, w, b});
  EXPECT_TRUE(all_close(grads[2], full({4}, 6.0, DType::Float64), 0, 0));
  EXPECT_EQ(grads[0].shape(), x.shape());
}
