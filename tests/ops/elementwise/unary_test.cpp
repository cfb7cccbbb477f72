// Unary elementwise primitives: values against std:: functions in float64, float32 kernels against
// the same reference, gradcheck (VJP, JVP, dot product) on contiguous, transposed, strided,
// broadcast (stride-0) and 0-d inputs, second derivatives, and bad input.
#include <limits>

#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  bool positive;  // domain needs x > 0 (log, sqrt)
};

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

std::vector<UnaryCase> cases() {
  return {
      {"neg", [](const Tensor& x) { return neg(x); }, [](double v) { return -v; }, false},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, false},
      {"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, true},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double v) { return std::sin(v); }, false},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double v) { return std::cos(v); }, false},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, false},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }, false},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0; }, false},
      {"gelu", [](const Tensor& x) { return gelu(x); }, gelu_ref, false},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); }, gelu_tanh_ref, false},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, true},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double v) { return std::erf(v); }, false},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double v) { return std::fabs(v); }, false},
      {"square", [](const Tensor& x) { return square(x); }, [](double v) { return v * v; }, false},
  };
}

// The inputs every op is checked on: contiguous of awkward sizes, 0-d, and three kinds of views.
std::vector<std::pair<std::string, Tensor>> inputs(bool positive, uint64_t seed) {
  return {
      {"contiguous [2,3]", random({2, 3}, seed, positive)},
      {"[7]", random({7}, seed + 1, positive)},
      {"0-d", random({}, seed + 2, positive)},
      {"transposed [3,4]", transposed_random({3, 4}, seed + 3, positive)},
      {"strided [2,3]", strided_random({2, 3}, seed + 4, positive)},
      {"expanded [3,2]", expanded_random({3, 2}, seed + 5, positive)},
  };
}

}  // namespace

TEST(Unary, ValuesMatchFloat64Reference) {
  for (const UnaryCase& c : cases()) {
    for (auto& [what, x] : inputs(c.positive, 100)) {
      Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), DType::Float64) << c.name;
      EXPECT_TRUE(all_close(y, ref_unary(x, c.ref), 1e-14, 1e-13)) << c.name << " on " << what;
    }
  }
}

TEST(Unary, Float32MatchesReference) {
  // Sizes past the parallel grain (2^15) exercise the threaded path; 33 the vector tail.
  for (const UnaryCase& c : cases()) {
    for (Shape s : {Shape{33}, Shape{33000}}) {
      Tensor x64 = random(s, 7, c.positive);
      Tensor y = c.op(x64.to(DType::Float32));
      EXPECT_EQ(y.dtype(), DType::Float32);
      Tensor ref = ref_unary(x64.to(DType::Float32).to(DType::Float64), c.ref);
      EXPECT_TRUE(all_close(y.to(DType::Float64), ref, 1e-6, 1e-5)) << c.name << " size " << s[0];
    }
    // Views take the strided path: a small one, and one large enough for threads to split its rows.
    for (Shape s : {Shape{5, 7}, Shape{150, 230}}) {
      Tensor xt = transposed_random(s, 8, c.positive).to(DType::Float32);
      EXPECT_TRUE(all_close(c.op(xt).to(DType::Float64), ref_unary(xt.to(DType::Float64), c.ref), 1e-6, 1e-5))
          << c.name << " transposed " << to_string(s);
    }
  }
}

TEST(Unary, Gradcheck) {
  for (const UnaryCase& c : cases()) {
    for (auto& [what, x] : inputs(c.positive, 200)) {
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return c.op(in[0]); }, {x})) << c.name << " on " << what;
    }
  }
}

TEST(Unary, SecondDerivatives) {
  // gradcheck of the gradient: the VJPs are built from differentiable ops (relu and abs have zero
  // second derivative away from 0, which this also checks).
  for (const UnaryCase& c : cases()) {
    Tensor x = random({4}, 300, c.positive);
    auto g = [&](const std::vector<Tensor>& in) { return grad([&](const Tensor& v) { return sum(c.op(v)); })(in[0]); };
    EXPECT_TRUE(grad_ok(g, {x})) << c.name;
  }
}

TEST(Unary, KinksUseTheConventionalSubgradient) {
  Tensor x = from_vector(std::vector<double>{-1, 0, 2});
  EXPECT_TRUE(all_close(grad([](const Tensor& v) { return sum(relu(v)); })(x), from_vector(std::vector<double>{0, 0, 1})));
  EXPECT_TRUE(all_close(grad([](const Tensor& v) { return sum(abs(v)); })(x), from_vector(std::vector<double>{-1, 0, 1})));
}

TEST(Unary, Errors) {
  Tensor i = arange(3);
  for (const UnaryCase& c : cases()) EXPECT_EMBER_ERROR(c.op(i), std::string(c.name) + ":");
  for (const UnaryCase& c : cases()) EXPECT_EMBER_ERROR(c.op(i), "int64");
  EXPECT_EMBER_ERROR(exp(Tensor()), "exp:");
}

TEST(Unary, NaNPropagates) {
  // relu and abs must not hide a NaN (a diverging model should show NaN, not zeros).
  Tensor x = from_vector(std::vector<double>{std::numeric_limits<double>::quiet_NaN()});
  for (const UnaryCase& c : cases())
    for (DType dt : {DType::Float32, DType::Float64}) EXPECT_TRUE(std::isnan(c.op(x.to(dt)).item())) << c.name << " " << dt;
}

// ---- sign, log1p, expm1, silu, clamp, leaky_relu, elu, softplus ----

TEST(Unary, Log1pAndExpm1StayAccurateNearZero) {
  Tensor x = from_vector(std::vector<double>{1e-12, -3e-10, 0.5});
  EXPECT_EQ(log1p(x).to_vector<double>(), (std::vector<double>{std::log1p(1e-12), std::log1p(-3e-10), std::log1p(0.5)}));
  EXPECT_EQ(expm1(x).to_vector<double>(), (std::vector<double>{std::expm1(1e-12), std::expm1(-3e-10), std::expm1(0.5)}));
  // The naive forms lose every digit here.
  EXPECT_NE(log1p(x).to_vector<double>()[0], std::log(1 + 1e-12));
  EXPECT_NEAR(log1p(x.to(DType::Float32)).to_vector<float>()[0], 1e-12f, 1e-18f);
}

TEST(Unary, SoftplusIsStableAtLargeMagnitudes) {
  Tensor x = from_vector(std::vector<double>{-1000, -30, 0, 30, 1000});
  std::vector<double> y = softplus(x).to_vector<double>();
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], std::exp(-30.0), 1e-25);
  EXPECT_NEAR(y[2], std::log(2.0), 1e-15);
  EXPECT_EQ(y[3], 30.0);
  EXPECT_EQ(y[4], 1000.0);
  Tensor g = grad([](const Tensor& v) { return sum(softplus(v)); })(x);
  EXPECT_TRUE(all_close(g, sigmoid(x), 1e-13, 0));  // above the threshold the slope is exactly 1
  std::vector<float> yf = softplus(x.to(DType::Float32)).to_vector<float>();
  for (float v : yf) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EMBER_ERROR(softplus(x, -1.0), "softplus: beta must be positive, got -1");
}

TEST(Unary, ClampPassesTheGradientStrictlyInsideItsBoundsAndSignHasNone) {
  Tensor x = from_vector(std::vector<double>{-2, -1, 0.3, 1, 2});
  EXPECT_EQ(clamp(x, -1, 1).to_vector<double>(), (std::vector<double>{-1, -1, 0.3, 1, 1}));
  Tensor g = grad([](const Tensor& v) { return sum(clamp(v, -1, 1)); })(x);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0, 1, 0, 0}));  // PyTorch 2.15's values
  EXPECT_EQ(clamp_min(x, 0.5).to_vector<double>(), (std::vector<double>{0.5, 0.5, 0.5, 1, 2}));
  EXPECT_EQ(clamp_max(x, 0.5).to_vector<double>(), (std::vector<double>{-2, -1, 0.3, 0.5, 0.5}));
  Tensor n = from_vector(std::vector<double>{NAN});
  EXPECT_TRUE(std::isnan(clamp(n, -1, 1).item()));
  EXPECT_EQ(sign(x).to_vector<double>(), (std::vector<double>{-1, -1, 1, 1, 1}));
  EXPECT_EQ(sign(zeros({1}, DType::Float64)).item(), 0.0);
  EXPECT_EQ(grad([](const Tensor& v) { return sum(sign(v)); })(x).to_vector<double>(), (std::vector<double>(5, 0.0)));
}

TEST(Unary, LeakyReluEluAndSiluMatchTheirFormulas) {
  Tensor x = random({4, 7}, 401);
  EXPECT_TRUE(all_close(leaky_relu(x), ref_unary(x, [](double v) { return v > 0 ? v : 0.01 * v; }), 0, 0));
  EXPECT_TRUE(all_close(elu(x), ref_unary(x, [](double v) { return v > 0 ? v : std::exp(v) - 1; }), 1e-15, 1e-15));
  EXPECT_TRUE(all_close(silu(x), ref_unary(x, [](double v) { return v / (1 + std::exp(-v)); }), 1e-15, 1e-14));
  // The second derivative of elu below zero is a e^x, reached through its output.
  Tensor neg_x = -abs(x) - 0.1;
  Tensor h = grad([](const Tensor& v) { return sum(grad([](const Tensor& u) { return sum(elu(u, 2.0)); })(v)); })(neg_x);
  EXPECT_TRUE(all_close(h, ref_unary(neg_x, [](double v) { return 2 * std::exp(v); }), 1e-12, 1e-12));
}
