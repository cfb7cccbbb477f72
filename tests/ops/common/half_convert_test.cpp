// The array conversions between float32 and the 16-bit floats: every path this CPU can run (scalar,
// AVX2 for bfloat16, F16C for float16) against the scalar reference of framework/core/half.h, on
// lengths around the 8-lane vectors, every 16-bit pattern when widening, and random, tie, overflow,
// subnormal and NaN floats when narrowing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/common/cpu/half_convert.h"
#include "test_util.h"

using namespace ember;
using namespace ember::cpu;

namespace {

const int64_t kLengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 1003};

std::vector<HalfPath> paths(bool simd_available) {
  std::vector<HalfPath> p = {HalfPath::Scalar, HalfPath::Auto};
  if (simd_available) p.push_back(HalfPath::Simd);
  return p;
}

// Random floats of every kind: normal values over the whole exponent range, exact ties between
// two 16-bit neighbours, values near each format's overflow, subnormals, zeros, infinities, NaNs.
std::vector<float> awkward_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = uint32_t(rng());
    switch (i % 8) {
      case 0: v[i] = bits_float(u); break;                                              // any pattern, NaNs included
      case 1: v[i] = float(std::ldexp(double(int32_t(u)) / 2147483648.0, int(u % 40) - 20)); break;
      case 2: v[i] = bits_float((u & 0xffff0000u) | 0x8000u); break;                    // a bfloat16 tie
      case 3: v[i] = bits_float((u & 0x8fffe000u) | 0x38001000u); break;                // a float16 tie
      case 4: v[i] = float((u % 2 ? -1 : 1) * (65504.0 + double(u % 64))); break;      // float16 overflow edge
      case 5: v[i] = float(std::ldexp(double(u % 4096), -36)); break;                   // float16 subnormals
      case 6: v[i] = i % 3 ? -0.0f : std::numeric_limits<float>::infinity(); break;
      default: v[i] = bits_float(0x7f7f0000u | (u & 0x8000ffffu)); break;              // near float's max
    }
  }
  return v;
}

// Bits equal, or both NaN of the same sign (F16C keeps a NaN's payload where the scalar path
// writes the canonical quiet NaN).
::testing::AssertionResult same_half(uint16_t got, uint16_t want, bool fp16, float from) {
  auto is_nan = [&](uint16_t h) { return fp16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff) : (h & 0x7f80) == 0x7f80 && (h & 0x7f); };
  if (got == want || (is_nan(got) && is_nan(want) && (got & 0x8000) == (want & 0x8000))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "from " << from << " (0x" << std::hex << float_bits(from) << "): got 0x" << got
                                       << ", expected 0x" << want;
}

TEST(HalfConvert, WideningMatchesTheScalarReferenceForEveryPattern) {
  std::vector<bfloat16> b(65536 + 5);
  std::vector<float16> h(65536 + 5);
  for (size_t i = 0; i < b.size(); ++i) b[i].bits = h[i].bits = uint16_t(i * 40503u);  // every pattern, shuffled
  for (int64_t n : kLengths) {
    const int64_t len = n == 1003 ? int64_t(b.size()) : n;
    for (HalfPath p : paths(bf16_simd_available())) {
      std::vector<float> out(size_t(len) + 1, 7.0f);
      bf16_to_float(b.data(), out.data(), len, p);
      for (int64_t i = 0; i < len; ++i) {
        float want = bf16_bits_to_float(b[i].bits);
        ASSERT_TRUE(float_bits(out[i]) == float_bits(want)) << "bfloat16 0x" << std::hex << b[i].bits << " at " << std::dec << i;
      }
      EXPECT_EQ(out[size_t(len)], 7.0f) << "wrote past the end";
    }
    for (HalfPath p : paths(fp16_simd_available())) {
      std::vector<float> out(size_t(len) + 1, 7.0f);
      fp16_to_float(h.data(), out.data(), len, p);
      for (int64_t i = 0; i < len; ++i) {
        float want = fp16_bits_to_float(h[i].bits);
        bool both_nan = std::isnan(out[i]) && std::isnan(want) && std::signbit(out[i]) == std::signbit(want);
        ASSERT_TRUE(both_nan || float_bits(out[i]) == float_bits(want)) << "float16 0x" << std::hex << h[i].bits;
      }
      EXPECT_EQ(out[size_t(len)], 7.0f) << "wrote past the end";
    }
  }
}

TEST(HalfConvert, NarrowingRoundsToNearestEvenOnEveryPath) {
  for (int64_t n : kLengths) {
    std::vector<float> in = awkward_floats(size_t(n == 1003 ? 20011 : n), uint64_t(n) + 11);
    const int64_t len = int64_t(in.size());
    for (HalfPath p : paths(bf16_simd_available())) {
      std::vector<bfloat16> out(size_t(len) + 1, bfloat16::from_bits(0x1234));
      float_to_bf16(in.data(), out.data(), len, p);
      for (int64_t i = 0; i < len; ++i) ASSERT_TRUE(same_half(out[i].bits, float_to_bf16_bits(in[i]), false, in[i]));
      EXPECT_EQ(out[size_t(len)].bits, 0x1234) << "wrote past the end";
    }
    for (HalfPath p : paths(fp16_simd_available())) {
      std::vector<float16> out(size_t(len) + 1, float16::from_bits(0x1234));
      float_to_fp16(in.data(), out.data(), len, p);
      for (int64_t i = 0; i < len; ++i) ASSERT_TRUE(same_half(out[i].bits, float_to_fp16_bits(in[i]), true, in[i]));
      EXPECT_EQ(out[size_t(len)].bits, 0x1234) << "wrote past the end";
    }
  }
}

TEST(HalfConvert, KnownValues) {
  const float in[9] = {1.0f, -2.0f, 65504.0f, 65520.0f, 1.00390625f, 1.01171875f, 5.960464477539063e-08f, 0.0f, -0.0f};
  for (HalfPath p : paths(fp16_simd_available())) {
    float16 h[9];
    float_to_fp16(in, h, 9, p);
    const uint16_t want[9] = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x3c04, 0x3c0c, 0x0001, 0x0000, 0x8000};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(h[i].bits, want[i]) << in[i];
  }
  for (HalfPath p : paths(bf16_simd_available())) {
    bfloat16 b[9];
    float_to_bf16(in, b, 9, p);
    // 1.00390625 is the tie between 1 and 1 + 2^-7: it rounds to the even 1; 1.01171875 rounds up.
    const uint16_t want[9] = {0x3f80, 0xc000, 0x4780, 0x4780, 0x3f80, 0x3f82, 0x3380, 0x0000, 0x8000};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(b[i].bits, want[i]) << in[i];
  }
}

TEST(HalfConvert, AskingForAMissingVectorPathIsAnError) {
  float f = 1.0f;
  bfloat16 b;
  float16 h;
  if (!bf16_simd_available()) EXPECT_EMBER_ERROR(float_to_bf16(&f, &b, 1, HalfPath::Simd), "needs AVX2");
  if (!fp16_simd_available()) EXPECT_EMBER_ERROR(float_to_fp16(&f, &h, 1, HalfPath::Simd), "needs AVX2 and F16C");
  if (bf16_simd_available() && fp16_simd_available()) {
    float_to_bf16(&f, &b, 1, HalfPath::Simd);
    float_to_fp16(&f, &h, 1, HalfPath::Simd);
    EXPECT_EQ(b.bits, 0x3f80);
    EXPECT_EQ(h.bits, 0x3c00);
  }
}

}  // namespace
