// jacobian and hessian against central finite differences, for one and several inputs.
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// d f / d x[j] by central differences, of shape f(x).shape, for each j; laid out as jacobian's.
Tensor numeric_jacobian(const Fn1& f, const Tensor& x, double eps = 1e-6) {
  Tensor y = f(x);
  Shape s = y.shape();
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  Tensor j = zeros({y.numel(), x.numel()}, DType::Float64);
  Tensor xf = x.contiguous().reshape({x.numel()});
  for (int64_t k = 0; k < x.numel(); ++k) {
    Tensor hi = copy(xf), lo = copy(xf);
    hi.set({k}, xf.at({k}) + eps);
    lo.set({k}, xf.at({k}) - eps);
    std::vector<double> a = f(hi.reshape(x.shape())).to_vector<double>(), b = f(lo.reshape(x.shape())).to_vector<double>();
    for (int64_t i = 0; i < y.numel(); ++i) j.set({i, k}, (a[size_t(i)] - b[size_t(i)]) / (2 * eps));
  }
  return j.reshape(s);
}

Tensor f_vec(const Tensor& x) { return tanh(matmul(x, x.transpose(0, 1))) * sum(exp(x), {1}, true); }

}  // namespace

TEST(Functional, JacobianMatchesFiniteDifferences) {
  Tensor x = random({2, 3}, 901);
  Tensor j = jacobian(f_vec, x);
  EXPECT_EQ(j.shape(), (Shape{2, 2, 2, 3}));
  EXPECT_TRUE(all_close(j, numeric_jacobian(f_vec, x), 1e-7, 1e-6));
}

TEST(Functional, JacobianOverSeveralInputs) {
  Tensor a = random({3}, 902), b = random({2, 3}, 903);
  auto f = [](const std::vector<Tensor>& v) { return matmul(v[1], sin(v[0])); };
  std::vector<Tensor> js = jacobian(f, {a, b});
  ASSERT_EQ(js.size(), 2u);
  EXPECT_EQ(js[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(js[1].shape(), (Shape{2, 2, 3}));
  EXPECT_TRUE(all_close(js[0], numeric_jacobian([&](const Tensor& x) { return f({x, b}); }, a), 1e-7, 1e-6));
  EXPECT_TRUE(all_close(js[1], numeric_jacobian([&](const Tensor& x) { return f({a, x}); }, b), 1e-7, 1e-6));
}

TEST(Functional, HessianMatchesFiniteDifferencesOfTheGradient) {
  Tensor x = random({4}, 904);
  Fn1 f = [](const Tensor& v) { return sum(exp(v) * sin(v)) + sum(v) * sum(v * v); };
  Tensor h = hessian(f, x);
  EXPECT_EQ(h.shape(), (Shape{4, 4}));
  EXPECT_TRUE(all_close(h, numeric_jacobian(grad(f), x), 1e-7, 1e-6));
  EXPECT_TRUE(all_close(h, h.transpose(0, 1), 1e-12, 0));
  EXPECT_EMBER_ERROR(hessian([](const Tensor& v) { return v * 2.0; }, x), "grad: the function must return a one-element tensor");
}
