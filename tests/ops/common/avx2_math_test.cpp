// The eight-lane float32 math behind the AVX2 elementwise and softmax kernels, through
// cpu::unary_avx2 on arrays (so tails and masks are covered too): worst relative error over dense
// grids against float64 std:: functions, and the IEEE edge cases (inf, NaN, overflow, underflow).
#include <cmath>
#include <limits>

#include "ops/elementwise/cpu/unary_avx2.h"
#include "test_util.h"

using namespace ember;

namespace {

// x/2 (1 + tanh u) written as x / (1 + e^-2u): the same function, but without the cancellation
// that would make a float64 reference wrong for negative x.
double gelu_tanh_ref(double x) { return x / (1 + std::exp(-2 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

// Worst |got - want| / max(|want|, floor) over `xs`.
double worst_relative(UnaryOp op, const std::vector<float>& xs, double (*ref)(double), double floor = 1e-30) {
  std::vector<float> ys(xs.size());
  cpu::unary_avx2(op, xs.data(), ys.data(), int64_t(xs.size()));
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = ref(double(xs[i]));
    worst = std::max(worst, std::abs(double(ys[i]) - want) / std::max(std::abs(want), floor));
  }
  return worst;
}

std::vector<float> grid(double lo, double hi, double step) {
  std::vector<float> xs;
  for (double x = lo; x <= hi; x += step) xs.push_back(float(x));
  return xs;
}

std::vector<float> apply(UnaryOp op, std::vector<float> xs) {
  std::vector<float> ys(xs.size());
  cpu::unary_avx2(op, xs.data(), ys.data(), int64_t(xs.size()));
  return ys;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST(Avx2Math, WorstRelativeErrorOverTheRange) {
  if (!cpu::unary_avx2_supported(UnaryOp::Exp)) GTEST_SKIP() << "this CPU has no AVX2/FMA; the scalar loops are used";
  EXPECT_LT(worst_relative(UnaryOp::Exp, grid(-87.3, 88.7, 0.00317), [](double x) { return std::exp(x); }), 3e-7);
  EXPECT_LT(worst_relative(UnaryOp::Tanh, grid(-12, 12, 0.000913), [](double x) { return std::tanh(x); }), 6e-7);
  // Tiny arguments, where tanh x ~ x: the polynomial branch keeps full relative accuracy.
  EXPECT_LT(worst_relative(UnaryOp::Tanh, grid(-1e-3, 1e-3, 1.3e-7), [](double x) { return std::tanh(x); }, 1e-40), 3e-7);
  EXPECT_LT(worst_relative(UnaryOp::Sigmoid, grid(-80, 80, 0.00291), [](double x) { return 1 / (1 + std::exp(-x)); }), 6e-7);
  // GELU: for negative x its value is x e^(-2u) with 2u = O(x^3), so float32 rounding of u alone
  // (relative 6e-8) moves the result by 6e-8 |2u| relatively: about 1e-6 at x = -4, 7e-6 at x = -9.
  EXPECT_LT(worst_relative(UnaryOp::GeluTanh, grid(-4, 30, 0.00137), gelu_tanh_ref), 2e-6);
  EXPECT_LT(worst_relative(UnaryOp::GeluTanh, grid(-9, -4, 0.00137), gelu_tanh_ref), 1.5e-5);
  // erf: relative accuracy near 0 (Taylor branch), across the 0.5 switch, and up to where it is 1.
  EXPECT_LT(worst_relative(UnaryOp::Erf, grid(-6, 6, 0.000731), [](double x) { return std::erf(x); }, 1e-40), 1e-6);
  EXPECT_LT(worst_relative(UnaryOp::Erf, grid(-1e-3, 1e-3, 1.3e-7), [](double x) { return std::erf(x); }, 1e-40), 3e-7);
  // Exact GELU, x Phi(x), down to x = -13 (value 1e-37): the erfc branch keeps the negative side's
  // relative accuracy, up to the conditioning of u = -x / sqrt 2 (relative error ~ u^2 * 1e-7).
  auto gelu_ref = [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); };
  EXPECT_LT(worst_relative(UnaryOp::Gelu, grid(-3, 20, 0.000917), gelu_ref), 1e-6);
  EXPECT_LT(worst_relative(UnaryOp::Gelu, grid(-13, -3, 0.000917), gelu_ref), 2e-5);
}

TEST(Avx2Math, EdgeCasesFollowIeee) {
  if (!cpu::unary_avx2_supported(UnaryOp::Exp)) GTEST_SKIP() << "this CPU has no AVX2/FMA; the scalar loops are used";
  std::vector<float> e = apply(UnaryOp::Exp, {kInf, -kInf, kNan, 89.0f, -100.0f, 0.0f, 88.72f, 1.0f, -1.0f});
  EXPECT_EQ(e[0], kInf);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], kInf);   // overflow
  EXPECT_EQ(e[4], 0.0f);   // underflow flushes
  EXPECT_EQ(e[5], 1.0f);
  EXPECT_TRUE(std::isfinite(e[6]) && e[6] > 3.3e38f);  // just below FLT_MAX's logarithm
  std::vector<float> t = apply(UnaryOp::Tanh, {kInf, -kInf, kNan, -0.0f, 50.0f, -50.0f});
  EXPECT_EQ(t[0], 1.0f);
  EXPECT_EQ(t[1], -1.0f);
  EXPECT_TRUE(std::isnan(t[2]));
  EXPECT_TRUE(t[3] == 0.0f && std::signbit(t[3]));
  EXPECT_EQ(t[4], 1.0f);
  EXPECT_EQ(t[5], -1.0f);
  std::vector<float> s = apply(UnaryOp::Sigmoid, {kInf, -kInf, kNan, 200.0f, -200.0f});
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], 1.0f);
  EXPECT_EQ(s[4], 0.0f);
  std::vector<float> r = apply(UnaryOp::Erf, {kInf, -kInf, kNan, -0.0f, 20.0f, -20.0f});
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_EQ(r[1], -1.0f);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(r[3] == 0.0f && std::signbit(r[3]));
  EXPECT_EQ(r[4], 1.0f);
  EXPECT_EQ(r[5], -1.0f);
  std::vector<float> ge = apply(UnaryOp::Gelu, {kInf, kNan, -30.0f, 1e30f, -1e30f, 0.0f});
  EXPECT_EQ(ge[0], kInf);
  EXPECT_TRUE(std::isnan(ge[1]));
  EXPECT_EQ(ge[2], 0.0f);
  EXPECT_EQ(ge[3], 1e30f);
  EXPECT_EQ(ge[4], 0.0f);
  EXPECT_EQ(ge[5], 0.0f);
  std::vector<float> g = apply(UnaryOp::GeluTanh, {kInf, kNan, -30.0f, 1e30f, -1e30f, 0.0f});
  EXPECT_EQ(g[0], kInf);
  EXPECT_TRUE(std::isnan(g[1]));
  EXPECT_EQ(g[2], 0.0f);
  EXPECT_EQ(g[3], 1e30f);
  EXPECT_EQ(g[4], 0.0f);
  EXPECT_EQ(g[5], 0.0f);
}

TEST(Avx2Math, EveryLengthMatchesElementByElement) {
  // Lengths around the 8-lane step: the masked tail must give the same values as full vectors and
  // must not write past n.
  if (!cpu::unary_avx2_supported(UnaryOp::Tanh)) GTEST_SKIP() << "this CPU has no AVX2/FMA; the scalar loops are used";
  Generator gen(5);
  std::vector<float> xs = normal({40}, 0, 2, DType::Float32, &gen).to_vector<float>();
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::GeluTanh, UnaryOp::Gelu, UnaryOp::Erf}) {
    std::vector<float> full = apply(op, xs);
    for (int64_t n : {0, 1, 7, 8, 9, 15, 17, 33}) {
      std::vector<float> y(size_t(n) + 4, -7.0f);
      cpu::unary_avx2(op, xs.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[size_t(i)], full[size_t(i)]) << "n " << n << " i " << i;
      for (size_t i = size_t(n); i < y.size(); ++i) EXPECT_EQ(y[i], -7.0f) << "wrote past n = " << n;
    }
  }
}

TEST(Avx2Math, OnlyTheVectorisedOpsAreClaimed) {
  EXPECT_FALSE(cpu::unary_avx2_supported(UnaryOp::Log));
  EXPECT_FALSE(cpu::unary_avx2_supported(UnaryOp::Sin));
  EXPECT_FALSE(cpu::unary_avx2_supported(UnaryOp::Sqrt));
}
