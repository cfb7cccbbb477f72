// DType::BFloat16 and DType::Float16 as tensor dtypes: their facts, the factories, element access,
// casts between every pair of dtypes against float64 references (float to half rounds to nearest
// even, float64 without double rounding), printing, copies and views, and the op table's refusal
// of a dtype an op does not declare.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/core/autograd/primitive.h"
#include "test_util.h"

using namespace ember;
using ember::testing::random;

namespace {

const DType kHalves[] = {DType::BFloat16, DType::Float16};
const DType kAll[] = {DType::Float32, DType::Float64, DType::Int64, DType::Bool, DType::BFloat16, DType::Float16};

// The value of v rounded to `dt` (nearest, ties to even), computed from the two representable
// neighbours in double: an independent check of the casts' rounding.
double round_to(double v, DType dt) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const int mant = dt == DType::BFloat16 ? 8 : 11;  // significant bits
  const int emin = dt == DType::BFloat16 ? -126 : -14;
  const double max = dt == DType::BFloat16 ? 0x1.fep127 : 65504.0;
  int e;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, std::max(e - 1, emin) - (mant - 1));
  double q = v / ulp, lo = std::floor(q), r;
  if (q - lo > 0.5) r = lo + 1;
  else if (q - lo < 0.5) r = lo;
  else r = std::fmod(lo, 2.0) == 0 ? lo : lo + 1;
  double out = r * ulp;
  // Past the largest finite value by half an ulp or more: infinity.
  if (std::fabs(out) > max) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return out;
}

TEST(HalfDType, FactsNamesAndElementTypes) {
  EXPECT_EQ(itemsize(DType::BFloat16), 2u);
  EXPECT_EQ(itemsize(DType::Float16), 2u);
  EXPECT_STREQ(name(DType::BFloat16), "bfloat16");
  EXPECT_STREQ(name(DType::Float16), "float16");
  EXPECT_TRUE(is_floating(DType::BFloat16) && is_floating(DType::Float16));
  EXPECT_TRUE(is_half(DType::BFloat16) && is_half(DType::Float16) && !is_half(DType::Float32));
  EXPECT_EQ(dtype_of<bfloat16>::value, DType::BFloat16);
  EXPECT_EQ(dtype_of<float16>::value, DType::Float16);
}

TEST(HalfDType, FactoriesElementAccessAndPrinting) {
  for (DType dt : kHalves) {
    SCOPED_TRACE(name(dt));
    Tensor z = zeros({2, 3}, dt), o = ones({3}, dt), f = full({2}, 0.1, dt), s = scalar(-2.5, dt);
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
    EXPECT_EQ(o.to_vector<double>(), std::vector<double>(3, 1.0));
    EXPECT_EQ(f.at({1}), round_to(0.1, dt));  // 0.1 rounded once
    EXPECT_EQ(s.item(), -2.5);
    EXPECT_EQ(s.dim(), 0);
    Tensor e = empty({4, 5}, dt);
    EXPECT_EQ(e.numel(), 20);
    EXPECT_EQ(e.impl()->storage->bytes(), 40u);
    Tensor a = arange(-3, 300, 7, dt);
    std::vector<double> av = a.to_vector<double>();
    for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(av[i], round_to(-3.0 + 7.0 * double(i), dt));
    z.set({1, 2}, 3.14159);
    EXPECT_EQ(z.at({1, 2}), round_to(3.14159, dt));
    EXPECT_EQ(z.at({0, 0}), 0.0);
    std::string text = z.to_string();
    EXPECT_NE(text.find(std::string("dtype=") + name(dt)), std::string::npos) << text;
    EXPECT_NE(text.find("3.1406"), std::string::npos) << text;  // 3.140625 in both formats
  }
  std::vector<bfloat16> bv = {bfloat16(1.5f), bfloat16(-0.25f), bfloat16(3.0f)};
  Tensor b = from_vector(bv, {3, 1});
  EXPECT_EQ(b.dtype(), DType::BFloat16);
  EXPECT_EQ(b.shape(), (Shape{3, 1}));
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1.5, -0.25, 3.0}));
  std::vector<float16> hv = {float16(65504.0f), float16(-1e-7f)};
  Tensor h = from_vector(hv);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{65504.0, round_to(-1e-7, DType::Float16)}));
  std::vector<float16> back = h.to_vector<float16>();
  EXPECT_EQ(back[0].bits, hv[0].bits);
  EXPECT_EQ(back[1].bits, hv[1].bits);
  EXPECT_EQ(b.to_vector<bfloat16>()[1].bits, bfloat16(-0.25f).bits);
  EXPECT_EMBER_ERROR(from_vector(std::vector<bfloat16>(3), {2, 2}), "from_vector: 3 values do not fill shape");
  EXPECT_EMBER_ERROR(arange(0, 3, 1, DType::Bool), "arange: got bool");
}

TEST(HalfDType, CastsFromFloatsRoundToNearestEvenAgainstTheReference) {
  Tensor x64 = random({4097}, 3) * 1e3;
  // Values of every scale, the float16 limits and subnormals among them.
  x64 = concat({x64, random({300}, 4) * 1e-6, random({50}, 5) * 7e4, from_vector(std::vector<double>{65504, 65519.99, 65520, -0.0})}, 0);
  for (DType dt : kHalves) {
    for (DType from : {DType::Float64, DType::Float32}) {
      SCOPED_TRACE(std::string(name(from)) + " to " + name(dt));
      Tensor src = x64.to(from);
      std::vector<double> want = src.to_vector<double>(), got = src.to(dt).to_vector<double>();
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], round_to(want[i], dt)) << "element " << i << " = " << want[i];
    }
  }
  // A float64 just above a bfloat16 tie: rounding through float32 first would land on the tie and
  // round to even (1); rounded once it goes up.
  Tensor d = from_vector(std::vector<double>{1.00390625 + 0x1p-40, 1.00048828125 + 0x1p-40, -(1.00390625 + 0x1p-40)});
  EXPECT_EQ(d.to(DType::BFloat16).to_vector<double>(), (std::vector<double>{1.0078125, 1.0, -1.0078125}));
  EXPECT_EQ(d.to(DType::Float16).to_vector<double>()[1], 1.0009765625);
  EXPECT_EQ(from_vector(std::vector<int64_t>{16777217, 257, -1000001}).to(DType::BFloat16).to_vector<double>(),
            (std::vector<double>{16777216.0, 256.0, -999424.0}));
}

TEST(HalfDType, EveryPairOfDTypesConvertsLikeTheFloat64Reference) {
  // Values every dtype can hold after its own rounding: small integers and binary fractions.
  Tensor base = from_vector(std::vector<double>{0, 1, -2, 3.5, -0.75, 100, 257, -4096, 0.125, 1}, {2, 5});
  for (DType from : kAll) {
    Tensor x = base.to(from);
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(name(from)) + " -> " + name(to));
      Tensor y = x.to(to);
      EXPECT_EQ(y.dtype(), to);
      EXPECT_EQ(y.shape(), base.shape());
      std::vector<double> src = x.to_vector<double>(), got = y.to_vector<double>();
      for (size_t i = 0; i < got.size(); ++i) {
        double want = to == DType::Bool ? double(src[i] != 0) : to == DType::Int64 ? std::trunc(src[i]) : src[i];
        if (is_half(to)) want = round_to(want, to);
        EXPECT_EQ(got[i], want) << "element " << i;
      }
      // Transposed (strided) sources convert the same.
      EXPECT_EQ(x.t().to(to).to_vector<double>(), y.t().to_vector<double>());
    }
  }
}

TEST(HalfDType, HalfToIntegerAndBoolFollowTheFloatRules) {
  for (DType dt : kHalves) {
    SCOPED_TRACE(name(dt));
    Tensor x = from_vector(std::vector<double>{2.75, -3.5, 0.0, 1e-3}).to(dt);
    EXPECT_EQ(x.to(DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{2, -3, 0, 0}));
    EXPECT_EQ(x.to(DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true, false, true}));
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EMBER_ERROR(from_vector(std::vector<double>{1, NAN}).to(dt).to(DType::Int64),
                       std::string("cast: a ") + name(dt) + " value is NaN, infinite or outside int64's range");
    EXPECT_EMBER_ERROR(from_vector(std::vector<double>{-inf}).to(dt).to(DType::Int64), "outside int64's range");
    EXPECT_TRUE(std::isnan(from_vector(std::vector<double>{NAN}).to(dt).item()));
    EXPECT_EQ(from_vector(std::vector<double>{1e6}).to(DType::Float16).item(), inf);  // past 65504
  }
}

TEST(HalfDType, CopiesViewsAndIndexingMoveTheExactBits) {
  for (DType dt : kHalves) {
    SCOPED_TRACE(name(dt));
    Tensor x64 = random({5, 7, 3}, 9);
    Tensor x = x64.to(dt);
    Tensor r = x.to(DType::Float64);  // the rounded values, exactly
    Tensor p = x.permute({2, 0, 1});
    EXPECT_FALSE(p.is_contiguous());
    Tensor c = p.contiguous();
    EXPECT_TRUE(c.is_contiguous());
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(c.to_vector<double>(), r.permute({2, 0, 1}).to_vector<double>());
    EXPECT_EQ(x.slice(1, 1, 6, 2).clone().to_vector<double>(), r.slice(1, 1, 6, 2).to_vector<double>());
    EXPECT_EQ(x.reshape({35, 3}).t().unsqueeze(0).squeeze(0).to_vector<double>(),
              r.reshape({35, 3}).t().to_vector<double>());
    EXPECT_EQ(x.narrow(0, 1, 3).expand({2, 3, 7, 3}).to_vector<double>(), r.narrow(0, 1, 3).expand({2, 3, 7, 3}).to_vector<double>());
    EXPECT_EQ(concat({x, x.slice(0, 0, 2)}, 0).to_vector<double>(), concat({r, r.slice(0, 0, 2)}, 0).to_vector<double>());
    Tensor idx = from_vector(std::vector<int64_t>{2, 0, 6, 6, 1}, {1, 5, 1}).expand({5, 5, 3}).contiguous();
    EXPECT_EQ(gather(x, 1, idx).to_vector<double>(), gather(r, 1, idx).to_vector<double>());
    // copy_ converts from any dtype into a half destination, through views.
    Tensor dst = zeros({3, 5}, dt);
    dst.t().copy_(x64.slice(2, 0, 1).squeeze(2).slice(1, 0, 3));
    EXPECT_EQ(dst.to_vector<double>(), r.slice(2, 0, 1).squeeze(2).slice(1, 0, 3).t().to_vector<double>());
    Tensor m = x.clone();
    m.fill_(0.3);
    EXPECT_EQ(m.to_vector<double>(), std::vector<double>(105, round_to(0.3, dt)));
  }
}

TEST(HalfDType, CastIsDifferentiableAndGradientsComeBackInTheInputDType) {
  Tensor x = random({6}, 12).to(DType::Float32).requires_grad_();
  Tensor y = x.to(DType::BFloat16).to(DType::Float16).to(DType::Float32);
  (y * y).sum().backward();
  Tensor g = x.grad();
  ASSERT_TRUE(g.defined());
  EXPECT_EQ(g.dtype(), DType::Float32);
  std::vector<double> yv = y.detach().to_vector<double>(), gv = g.to_vector<double>();
  for (size_t i = 0; i < gv.size(); ++i) EXPECT_EQ(gv[i], round_to(round_to(2 * yv[i], DType::Float16), DType::BFloat16));
}

TEST(HalfDType, AnOpRefusesAFloatingDTypeItDoesNotDeclare) {
  Primitive<> twice = Primitive<>("half_refusal_probe", /*builtin=*/false).cpu([](const Args& x, const NoAttrs&) {
    return KernelOut(x[0] * 2.0);
  });
  Tensor b = ones({3}, DType::BFloat16);
  EXPECT_EMBER_ERROR(twice({b}),
                     "custom op 'half_refusal_probe': got bfloat16, accepts float32, float64 (convert with .to(dtype))");
  EXPECT_EQ(twice({ones({2}, DType::Float32)}).to_vector<double>(), (std::vector<double>{2, 2}));
  // Integer and bool inputs are the op's own to check: indices and masks pass through.
  Primitive<> first = Primitive<>("half_refusal_probe_2", false)
                          .dtypes({DType::Float32, DType::Float16})
                          .cpu([](const Args& x, const NoAttrs&) { return KernelOut(x[0]); });
  EXPECT_EQ(first({ones({2}, DType::Float16), arange(2)}).dtype(), DType::Float16);
  EXPECT_EMBER_ERROR(first({ones({2}, DType::Float64)}),
                     "custom op 'half_refusal_probe_2': got float64, accepts float32, float16");
}

}  // namespace
