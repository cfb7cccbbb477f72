#include <cmath>

#include "ops/norm/layer_norm.h"
#include "ops/row_reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// Two-pass float64 reference: mean, then biased variance about it.
Tensor ref_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  std::vector<double> wv = w.defined() ? w.to_vector<double>() : std::vector<double>();
  std::vector<double> bv = b.defined() ? b.to_vector<double>() : std::vector<double>();
  return map_rows(x, -1, x.size(-1), [&](const std::vector<double>& r) {
    double n = double(r.size()), m = 0, var = 0;
    for (double v : r) m += v;
    m /= n;
    for (double v : r) var += (v - m) * (v - m);
    var /= n;
    std::vector<double> y;
    for (size_t k = 0; k < r.size(); ++k) {
      double v = (r[k] - m) / std::sqrt(var + eps);
      if (!wv.empty()) v *= wv[k];
      if (!bv.empty()) v += bv[k];
      y.push_back(v);
    }
    return y;
  });
}

}  // namespace

TEST(LayerNorm, MatchesFloat64Reference) {
  uint64_t seed = 100;
  for (Shape s : {Shape{1}, Shape{7}, Shape{3, 33}, Shape{2, 3, 127}, Shape{127, 2}, Shape{4, 1}}) {
    SCOPED_TRACE(to_string(s));
    int64_t d = s.back();
    Tensor x = random(s, seed++) * 2.0 + 0.5, w = random({d}, seed++), b = random({d}, seed++);
    EXPECT_TRUE(all_close(layer_norm(x, w, b), ref_layer_norm(x, w, b, 1e-5), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(layer_norm(x, Tensor(), Tensor(), 1e-3), ref_layer_norm(x, Tensor(), Tensor(), 1e-3), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(layer_norm(x, w, Tensor()), ref_layer_norm(x, w, Tensor(), 1e-5), 1e-12, 1e-10));
  }
}

TEST(LayerNorm, NonContiguousInputsAndParameters) {
  // x (4, 5) transposed, weight and bias with stride 2: no copies, same results.
  Tensor x = transposed_random({4, 5}, 7);
  Tensor w = random({10}, 8).slice(0, 0, 10, 2), b = random({10}, 9).slice(0, 1, 10, 2);
  ASSERT_FALSE(x.is_contiguous());
  ASSERT_FALSE(w.is_contiguous());
  Tensor y = layer_norm(x, w, b);
  EXPECT_TRUE(all_close(y, layer_norm(x.contiguous(), w.contiguous(), b.contiguous()), 0, 0));
  EXPECT_TRUE(all_close(y, ref_layer_norm(x, w, b, 1e-5), 1e-12, 1e-10));
  Tensor x3 = random({3, 4, 6}, 10).permute({2, 0, 1});  // (6, 3, 4), last dim strided
  Tensor w3 = random({4}, 11);
  EXPECT_TRUE(all_close(layer_norm(x3, w3, Tensor()), ref_layer_norm(x3, w3, Tensor(), 1e-5), 1e-12, 1e-10));
}

TEST(LayerNorm, LargeMeanAndFloat32) {
  // A row mean far above the spread: the shifted one-pass sums must not lose the variance.
  Tensor x = random({3, 64}, 12) + 1e4;
  Tensor w = random({64}, 13), b = random({64}, 14);
  EXPECT_TRUE(all_close(layer_norm(x, w, b), ref_layer_norm(x, w, b, 1e-5), 1e-9, 1e-8));
  Tensor xs = random({5, 48}, 15) * 3.0 + 2.0;
  Tensor yf = layer_norm(xs.to(DType::Float32), w.slice(0, 0, 48).to(DType::Float32), b.slice(0, 0, 48).to(DType::Float32));
  EXPECT_EQ(yf.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(yf, layer_norm(xs, w.slice(0, 0, 48), b.slice(0, 0, 48)), 1e-5, 1e-5));
  Tensor xf = x.to(DType::Float32);
  EXPECT_TRUE(all_close(layer_norm(xf, Tensor(), Tensor()), layer_norm(x, Tensor(), Tensor()), 2e-3, 1e-3));
}

TEST(LayerNorm, Gradcheck) {
  GradcheckOptions opt;
  std::vector<Tensor> xs = {random({3, 4}, 20), transposed_random({3, 4}, 21), random({2, 2, 4}, 22),
                            random({1, 4}, 23), random({2, 8}, 24).slice(1, 0, 8, 2)};
  for (const Tensor& x : xs) {
    SCOPED_TRACE(to_string(x.shape()));
    Tensor w = random({4}, 25), b = random({4}, 26);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return layer_norm(a[0], a[1], a[2]); }, {x, w, b}, opt));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return layer_norm(a[0], Tensor(), Tensor(), 0.1); }, {x}, opt));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return layer_norm(a[0], a[1], Tensor()); }, {x, w}, opt));
    // Only the parameters traced (x a constant).
    EXPECT_TRUE(grad_ok([x](const std::vector<Tensor>& a) { return layer_norm(x, a[0], a[1]); }, {w, b}, opt));
  }
}

TEST(LayerNorm, GradOfGrad) {
  Tensor x = random({2, 5}, 30), w = random({5}, 31), b = random({5}, 32), c = random({2, 5}, 33);
  auto loss = [c](const std::vector<Tensor>& a) { return sum(square(layer_norm(a[0], a[1], a[2])) * c); };
  // Second derivatives w.r.t. every input, through gradcheck of the gradient.
  for (int arg = 0; arg < 3; ++arg)
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return grad(loss, arg)(a); }, {x, w, b})) << "arg " << arg;
  // Hessian-vector product in x against central differences of the gradient.
  Tensor v = random({2, 5}, 34);
  auto gx = [&](const Tensor& z) { return grad(loss, 0)({z, w, b}); };
  Tensor h = grad([&](const Tensor& z) { return sum(gx(z) * v); })(x);
  double eps = 1e-5;
  EXPECT_TRUE(all_close(h, (gx(x + v * eps) - gx(x - v * eps)) / (2 * eps), 1e-6, 1e-5));
}

TEST(LayerNorm, TrainingStyleBackward) {
  // requires_grad_ leaves and backward() go through the same rules.
  Tensor x = random({3, 6}, 40), w = random({6}, 41), b = random({6}, 42);
  Tensor xl = x.clone().requires_grad_(), wl = w.clone().requires_grad_(), bl = b.clone().requires_grad_();
  sum(square(layer_norm(xl, wl, bl))).backward();
  auto gs = value_and_grads([](const std::vector<Tensor>& a) { return sum(square(layer_norm(a[0], a[1], a[2]))); })({x, w, b});
  EXPECT_TRUE(all_close(xl.grad(), gs.second[0], 1e-12, 1e-10));
  EXPECT_TRUE(all_close(wl.grad(), gs.second[1], 1e-12, 1e-10));
  EXPECT_TRUE(all_close(bl.grad(), gs.second[2], 1e-12, 1e-10));
}

TEST(LayerNorm, BadInput) {
  Tensor x = random({2, 4}, 50);
  EXPECT_EMBER_ERROR(layer_norm(x, random({3}, 1), Tensor()), "layer_norm: weight has shape [3] but the input [2, 4] needs [4]");
  EXPECT_EMBER_ERROR(layer_norm(x, Tensor(), random({4, 1}, 1)), "layer_norm: bias has shape [4, 1]");
  EXPECT_EMBER_ERROR(layer_norm(x, random({4}, 1).to(DType::Float32), Tensor()), "layer_norm: weight is float32 but the input is float64");
  EXPECT_EMBER_ERROR(layer_norm(arange(8).reshape({2, 4}), Tensor(), Tensor()), "layer_norm: expected a floating input (float32, float64, bfloat16, float16), got int64");
  EXPECT_EMBER_ERROR(layer_norm(scalar(1.0), Tensor(), Tensor()), "layer_norm: the input needs a non-empty last dim");
  EXPECT_EMBER_ERROR(layer_norm(zeros({3, 0}), Tensor(), Tensor()), "non-empty last dim");
  EXPECT_EMBER_ERROR(layer_norm(x, Tensor(), Tensor(), -1.0), "layer_norm: eps must be >= 0");
}
