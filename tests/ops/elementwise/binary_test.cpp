// Binary elementwise primitives with NumPy broadcasting: values against plain float64 loops,
// float32 and int64 kernels, gradcheck (VJP, JVP, dot product) on broadcasting pairs, scalars and
// non-contiguous operands, second derivatives, the operator overloads, and bad input.
#include <cmath>
#include <limits>

#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  bool positive_a, positive_b;  // pow needs a > 0 for b's gradient; div needs b away from 0
};

std::vector<BinaryCase> cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, [](double x, double y) { return x + y; }, false, false},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, [](double x, double y) { return x - y; }, false, false},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, [](double x, double y) { return x * y; }, false, false},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, [](double x, double y) { return x / y; }, false, true},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, [](double x, double y) { return std::pow(x, y); }, true, false},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, [](double x, double y) { return std::max(x, y); }, false, false},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, [](double x, double y) { return std::min(x, y); }, false, false},
  };
}

struct OperandPair {
  std::string what;
  Tensor a, b;
};

// Operand pairs: broadcasting in both directions, scalars on either side, and views.
std::vector<OperandPair> pairs(const BinaryCase& c, uint64_t s) {
  bool pa = c.positive_a, pb = c.positive_b;
  return {
      {"same [2,3]", random({2, 3}, s, pa), random({2, 3}, s + 1, pb)},
      {"[3,1,4] with [2,4]", random({3, 1, 4}, s + 2, pa), random({2, 4}, s + 3, pb)},
      {"[4] with [3,1]", random({4}, s + 4, pa), random({3, 1}, s + 5, pb)},
      {"[2,3] with 0-d", random({2, 3}, s + 6, pa), random({}, s + 7, pb)},
      {"0-d with [3]", random({}, s + 8, pa), random({3}, s + 9, pb)},
      {"0-d with 0-d", random({}, s + 10, pa), random({}, s + 11, pb)},
      {"transposed with strided", transposed_random({3, 4}, s + 12, pa), strided_random({3, 4}, s + 13, pb)},
      {"expanded with [1,2]", expanded_random({3, 2}, s + 14, pa), random({1, 2}, s + 15, pb)},
      {"strided [2,3] with transposed-then-expanded [1,3]", strided_random({2, 3}, s + 16, pa),
       transposed_random({3, 1}, s + 17, pb).transpose(0, 1).expand({2, 3})},
      {"[2,1,3] with transposed [4,3]", strided_random({2, 1, 3}, s + 18, pa), transposed_random({4, 3}, s + 19, pb)},
      // The strided path's row loops: a column on either side, a row added to every row.
      {"[3,1] with [2,3,5]", random({3, 1}, s + 20, pa), random({2, 3, 5}, s + 21, pb)},
      {"[2,3,5] with [3,1]", random({2, 3, 5}, s + 22, pa), random({3, 1}, s + 23, pb)},
      {"[4,5] with [5]", random({4, 5}, s + 24, pa), random({5}, s + 25, pb)},
  };
}

}  // namespace

TEST(Binary, ValuesMatchFloat64Reference) {
  for (const BinaryCase& c : cases())
    for (const OperandPair& p : pairs(c, 10)) {
      Tensor y = c.op(p.a, p.b);
      EXPECT_EQ(y.shape(), ref_broadcast(p.a.shape(), p.b.shape())) << c.name << " " << p.what;
      EXPECT_TRUE(y.is_contiguous());
      EXPECT_TRUE(all_close(y, ref_binary(p.a, p.b, c.ref), 1e-14, 1e-13)) << c.name << " on " << p.what;
    }
}

TEST(Binary, Float32MatchesReference) {
  for (const BinaryCase& c : cases()) {
    // Large enough for the threaded fast paths (same shape, scalar on either side) and the strided path.
    std::vector<std::pair<Tensor, Tensor>> ps = {
        {random({33000}, 1, c.positive_a), random({33000}, 2, c.positive_b)},
        {random({33000}, 3, c.positive_a), random({}, 4, c.positive_b)},
        {random({}, 5, c.positive_a), random({33000}, 6, c.positive_b)},
        {random({33, 7}, 7, c.positive_a), random({7}, 8, c.positive_b)},
        {transposed_random({7, 33}, 9, c.positive_a), random({33}, 10, c.positive_b)},
        {random({33, 1}, 11, c.positive_a), random({33, 70}, 12, c.positive_b)},
        {random({33, 70}, 13, c.positive_a), random({33, 1}, 14, c.positive_b)},
        // The strided path split among threads by rows, the later ranges starting inside an outer
        // dimension: a bias row over (3, 70, 160), a transposed view, a column over every row.
        {random({3, 70, 160}, 15, c.positive_a), random({160}, 16, c.positive_b)},
        {transposed_random({150, 230}, 17, c.positive_a), random({230}, 18, c.positive_b)},
        {random({250, 1}, 19, c.positive_a), random({2, 250, 140}, 20, c.positive_b)},
    };
    for (auto& [a, b] : ps) {
      Tensor af = a.to(DType::Float32), bf = b.to(DType::Float32);
      Tensor y = c.op(af, bf);
      EXPECT_EQ(y.dtype(), DType::Float32);
      Tensor ref = ref_binary(af.to(DType::Float64), bf.to(DType::Float64), c.ref);
      EXPECT_TRUE(all_close(y.to(DType::Float64), ref, 1e-6, 1e-5)) << c.name << " " << to_string(a.shape());
    }
  }
}

TEST(Binary, Int64Arithmetic) {
  Tensor a = from_vector(std::vector<int64_t>{7, -7, 9, 4}, {2, 2}), b = from_vector(std::vector<int64_t>{2, 3});
  EXPECT_EQ(add(a, b).to_vector<int64_t>(), (std::vector<int64_t>{9, -4, 11, 7}));
  EXPECT_EQ(sub(a, b).to_vector<int64_t>(), (std::vector<int64_t>{5, -10, 7, 1}));
  EXPECT_EQ(mul(a, b).to_vector<int64_t>(), (std::vector<int64_t>{14, -21, 18, 12}));
  EXPECT_EQ(div(a, b).to_vector<int64_t>(), (std::vector<int64_t>{3, -2, 4, 1}));  // C++ truncation
  EXPECT_EQ(maximum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{7, 3, 9, 4}));
  EXPECT_EQ(minimum(a, b).to_vector<int64_t>(), (std::vector<int64_t>{2, -7, 2, 3}));
  EXPECT_EQ(pow(a, b).to_vector<int64_t>(), (std::vector<int64_t>{49, -343, 81, 64}));
  // Integer division by zero gives 0 instead of a SIGFPE.
  EXPECT_EQ(div(a, zeros({}, DType::Int64)).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ((a + 1.0).dtype(), DType::Int64);
}

TEST(Binary, Int64MinDividedByMinusOneWraps) {
  // The one quotient that overflows int64 wraps to INT64_MIN (two's complement) instead of SIGFPE;
  // every other quotient by -1 is the plain negation.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  Tensor a = from_vector(std::vector<int64_t>{lo, hi, -5, 0, lo + 1});
  Tensor m1 = from_vector(std::vector<int64_t>{-1});
  const std::vector<int64_t> want{lo, -hi, 5, 0, hi};
  EXPECT_EQ(div(a, m1).to_vector<int64_t>(), want);
  EXPECT_EQ((a / m1).to_vector<int64_t>(), want);
  EXPECT_EQ((a / -1.0).to_vector<int64_t>(), want);
  Tensor c = a.clone();
  c.div_(m1);
  EXPECT_EQ(c.to_vector<int64_t>(), want);
  Tensor d = a.clone();
  d.div_(-1.0);
  EXPECT_EQ(d.to_vector<int64_t>(), want);
  // Broadcast the other way: a -1 numerator over INT64_MIN is 0, not a trap.
  EXPECT_EQ(div(m1, a).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, 0}));
}

// A float cast to int64 that cannot be held (NaN, infinities, |v| >= 2^63) raises instead of
// giving INT64_MIN; every representable value truncates toward zero as C++ does.
TEST(Binary, CastToInt64RefusesUnrepresentableFloats) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType from : {DType::Float32, DType::Float64}) {
    for (double bad : {nan, inf, -inf, 9223372036854775808.0, -1e30}) {
      SCOPED_TRACE(bad);
      Tensor x = from_vector(std::vector<double>{1.5, bad, -2.5, 0.5}, {2, 2}).to(from);
      EXPECT_EMBER_ERROR(x.to(DType::Int64), "NaN, infinite or outside int64's range");
      EXPECT_EMBER_ERROR(x.t().to(DType::Int64), "outside int64's range");
    }
    Tensor ok = from_vector(std::vector<double>{1.9, -2.9, 0.0, -9223372036854775808.0, 4611686018427387904.0}).to(from);
    EXPECT_EQ(ok.to(DType::Int64).to_vector<int64_t>(),
              (std::vector<int64_t>{1, -2, 0, std::numeric_limits<int64_t>::min(), int64_t(1) << 62}));
  }
  // Other casts from a NaN are defined and stay as they were.
  Tensor n = from_vector(std::vector<double>{nan});
  EXPECT_TRUE(std::isnan(n.to(DType::Float32).item()));
  EXPECT_EQ(n.to(DType::Bool).item(), 1.0);
}

TEST(Binary, Gradcheck) {
  for (const BinaryCase& c : cases())
    for (const OperandPair& p : pairs(c, 20)) {
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return c.op(in[0], in[1]); }, {p.a, p.b}))
          << c.name << " on " << p.what;
    }
}

TEST(Binary, GradcheckOneTracedOperand) {
  // Only one operand traced: the other's VJP must not be asked for (pow's b-gradient needs a > 0).
  Tensor a = random({2, 3}, 30), b = random({3}, 31);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return pow(in[0], 3.0); }, {a}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return pow(in[0], b); }, {random({2, 3}, 32, true)}));
  for (const BinaryCase& c : cases()) {
    if (c.positive_a || c.positive_b) continue;
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return c.op(in[0], b); }, {a})) << c.name;
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return c.op(a, in[0]); }, {b})) << c.name;
  }
}

TEST(Binary, SecondDerivatives) {
  for (const BinaryCase& c : cases()) {
    Tensor a = random({2, 3}, 40, c.positive_a), b = random({3}, 41, c.positive_b);
    auto ga = [&](const std::vector<Tensor>& in) {
      return grad([&](const std::vector<Tensor>& v) { return sum(c.op(v[0], v[1]) * c.op(v[0], v[1])); }, 0)(in);
    };
    auto gb = [&](const std::vector<Tensor>& in) {
      return grad([&](const std::vector<Tensor>& v) { return sum(c.op(v[0], v[1]) * c.op(v[0], v[1])); }, 1)(in);
    };
    EXPECT_TRUE(grad_ok(ga, {a, b})) << c.name << " d/da";
    EXPECT_TRUE(grad_ok(gb, {a, b})) << c.name << " d/db";
  }
}

TEST(Binary, MaximumAndMinimumSplitATiesGradientHalfAndHalf) {
  Tensor a = from_vector(std::vector<double>{1, 2, 3}), b = from_vector(std::vector<double>{1, 5, 0});
  auto [y, vjp] = make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{maximum(in[0], in[1])}; }, {a, b});
  std::vector<Tensor> g = vjp({ones({3}, DType::Float64)});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{0.5, 1, 0}));
  auto [y2, vjp2] = make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{minimum(in[0], in[1])}; }, {a, b});
  std::vector<Tensor> h = vjp2({ones({3}, DType::Float64)});
  EXPECT_EQ(h[0].to_vector<double>(), (std::vector<double>{0.5, 1, 0}));
  EXPECT_EQ(h[1].to_vector<double>(), (std::vector<double>{0.5, 0, 1}));
  // The tangent splits the same way: d max(x, x) / dx = 1/2 + 1/2.
  auto [y3, jv] = make_jvp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{maximum(in[0], in[1])}; }, {a, a},
                           {ones({3}, DType::Float64), zeros({3}, DType::Float64)});
  EXPECT_EQ(jv[0].to_vector<double>(), (std::vector<double>{0.5, 0.5, 0.5}));
}

TEST(Binary, OperatorsWithDoubles) {
  Tensor x = random({3}, 50);
  EXPECT_TRUE(all_close(x + 2.0, ref_unary(x, [](double v) { return v + 2; })));
  EXPECT_TRUE(all_close(2.0 - x, ref_unary(x, [](double v) { return 2 - v; })));
  EXPECT_TRUE(all_close(x - 2.0, ref_unary(x, [](double v) { return v - 2; })));
  EXPECT_TRUE(all_close(3.0 * x, ref_unary(x, [](double v) { return 3 * v; })));
  EXPECT_TRUE(all_close(x * 3.0, ref_unary(x, [](double v) { return 3 * v; })));
  EXPECT_TRUE(all_close(x / 4.0, ref_unary(x, [](double v) { return v / 4; })));
  EXPECT_TRUE(all_close(1.0 / x, ref_unary(x, [](double v) { return 1 / v; })));
  EXPECT_TRUE(all_close(-x, ref_unary(x, [](double v) { return -v; })));
  EXPECT_EQ((x.to(DType::Float32) * 2.0).dtype(), DType::Float32);  // the double takes the tensor's dtype
  EXPECT_EQ(scalar_like(x, 2.5).dim(), 0);
}

TEST(Binary, Errors) {
  Tensor f = random({2, 3}, 1), h = random({2, 3}, 2).to(DType::Float32);
  for (const BinaryCase& c : cases()) {
    std::string op = std::string(c.name) + ":";
    EXPECT_EMBER_ERROR(c.op(f, h), op);
    EXPECT_EMBER_ERROR(c.op(f, h), "float32");
    EXPECT_EMBER_ERROR(c.op(f, random({4}, 3)), op);
    EXPECT_EMBER_ERROR(c.op(f, random({4}, 3)), "broadcast");
    EXPECT_EMBER_ERROR(c.op(random({3, 2}, 4), random({2, 3}, 5)), "[3, 2]");
    EXPECT_EMBER_ERROR(c.op(f, Tensor()), op);
  }
  EXPECT_EMBER_ERROR(f + arange(3), "int64");
}

TEST(Binary, MaximumAndMinimumPropagateNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from_vector(std::vector<double>{nan, 1.0}), b = from_vector(std::vector<double>{1.0, nan});
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const Tensor& r : {maximum(a.to(dt), b.to(dt)), minimum(a.to(dt), b.to(dt)), maximum(b.to(dt), a.to(dt))}) {
      std::vector<double> v = r.to_vector<double>();
      EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1])) << r;
    }
  }
}

// A Bool operand takes the other operand's dtype (true = 1), so masks multiply data directly.
TEST(Binary, BoolOperandTakesTheOtherDtype) {
  Tensor x = random({3, 4}, 60), y = random({4}, 61);
  Tensor mask = gt(y, zeros({}, DType::Float64));  // broadcasts against x
  Tensor mf = mask.to(DType::Float64);
  for (const BinaryCase& c : cases()) {
    if (c.positive_a || c.positive_b) continue;  // pow / div want values away from 0
    Tensor r = c.op(x, mask), l = c.op(mask, x);
    EXPECT_EQ(r.dtype(), DType::Float64) << c.name;
    EXPECT_TRUE(all_close(r, c.op(x, mf), 0, 0)) << c.name;
    EXPECT_TRUE(all_close(l, c.op(mf, x), 0, 0)) << c.name;
  }
  Tensor xi = randint({3, 4}, -5, 5);
  EXPECT_EQ((xi * mask).dtype(), DType::Int64);
  EXPECT_TRUE(all_close(xi * mask, xi * mask.to(DType::Int64), 0, 0));
  // The gradient flows to the numeric operand only, masked.
  Tensor gx = grad([&](const Tensor& v) { return sum(v * mask); })(x);
  EXPECT_TRUE(all_close(gx, mf.expand({3, 4}), 0, 0));
  // A double beside a Bool tensor gives float32 (as PyTorch's default dtype), not a Bool 0.5.
  Tensor half = mask * 0.5, inv = 1.0 - mask;
  EXPECT_EQ(half.dtype(), DType::Float32);
  EXPECT_EQ(inv.dtype(), DType::Float32);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(half.at({j}), y.at({j}) > 0 ? 0.5 : 0.0);
    EXPECT_EQ(inv.at({j}), y.at({j}) > 0 ? 0.0 : 1.0);
  }
}

TEST(Binary, ArithmeticOnTwoBoolsIsAnErrorNamingTheOp) {
  Tensor p = gt(random({4}, 62), zeros({}, DType::Float64)), q = lt(random({4}, 63), zeros({}, DType::Float64));
  EXPECT_EMBER_ERROR(add(p, q), "add: both operands are bool");
  EXPECT_EMBER_ERROR(p * q, "mul: both operands are bool");
  EXPECT_EMBER_ERROR(sub(p, q), "logical_xor");
  EXPECT_EMBER_ERROR(maximum(p, q), "maximum: both operands are bool");
  EXPECT_EMBER_ERROR(pow(p, 2.0), "pow: both operands are bool");
  EXPECT_EMBER_ERROR(exp(p), "exp: expected a floating tensor (float32, float64, bfloat16, float16), got bool");
  EXPECT_EMBER_ERROR(mean(p), "mean");
  EXPECT_EMBER_ERROR(max(p), "max: got bool, accepts float32, float64, int64");
}
