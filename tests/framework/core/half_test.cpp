// The scalar bfloat16/float16 conversions against an independent float64 computation: round to
// nearest even, overflow to infinity, subnormals, NaN kept; every 16-bit pattern round-trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "framework/core/half.h"

using namespace ember;

namespace {

// The float16 pattern nearest to v (ties to even), computed in double with nearbyint.
uint16_t reference_fp16(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) return uint16_t(sign | uint16_t(std::nearbyint(std::ldexp(a, 24))));
  int e;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  double q = std::nearbyint(std::ldexp(m, 11)) - 1024.0;  // 10 stored bits
  if (q == 1024.0) { q = 0; ++e; }
  return uint16_t(sign | uint16_t((e - 1 + 15) << 10) | uint16_t(q));
}

uint16_t reference_bf16(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (a < std::ldexp(1.0, -126)) return uint16_t(sign | uint16_t(std::nearbyint(std::ldexp(a, 133))));
  int e;
  double m = std::frexp(a, &e);
  double q = std::nearbyint(std::ldexp(m, 8)) - 128.0;  // 7 stored bits
  if (q == 128.0) { q = 0; ++e; }
  if (e - 1 + 127 >= 255) return sign | 0x7f80;
  return uint16_t(sign | uint16_t((e - 1 + 127) << 7) | uint16_t(q));
}

}  // namespace

TEST(Half, EveryFloat16PatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = fp16_bits_to_float(uint16_t(b));
    bool nan = ((b >> 10) & 0x1f) == 31 && (b & 0x3ff) != 0;
    ASSERT_EQ(std::isnan(f), nan) << b;
    if (nan) {
      ASSERT_TRUE(std::isnan(fp16_bits_to_float(float_to_fp16_bits(f)))) << b;
    } else {
      ASSERT_EQ(float_to_fp16_bits(f), b) << b << " -> " << f;
      if (!std::isinf(f)) ASSERT_EQ(reference_fp16(double(f)), b) << b;
    }
  }
}

TEST(Half, EveryBfloat16PatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = bf16_bits_to_float(uint16_t(b));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f)))) << b;
    } else {
      ASSERT_EQ(float_to_bf16_bits(f), b) << b;
    }
  }
}

TEST(Half, RandomFloatsRoundToNearestEven) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<uint32_t> any;
  std::uniform_real_distribution<float> near_range(-70000.f, 70000.f);
  for (int i = 0; i < 400000; ++i) {
    // Half the draws are arbitrary bit patterns (every exponent), half lie near float16's range.
    float f = i % 2 ? bits_float(any(gen)) : near_range(gen) * std::ldexp(1.f, -int(any(gen) % 40));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_bits_to_float(float_to_fp16_bits(f))));
      EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f))));
      continue;
    }
    ASSERT_EQ(float_to_fp16_bits(f), reference_fp16(f)) << f;
    if (!std::isinf(f)) ASSERT_EQ(float_to_bf16_bits(f), reference_bf16(f)) << f;
  }
}

TEST(Half, BoundariesAndTies) {
  EXPECT_EQ(float_to_fp16_bits(65504.f), 0x7bff);
  EXPECT_EQ(float_to_fp16_bits(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_fp16_bits(65520.f), 0x7c00);  // the tie goes to the even side: infinity
  EXPECT_EQ(float_to_fp16_bits(-1e10f), 0xfc00);
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.f, -24)), 0x0001);
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.f, -25)), 0x0000);       // tie to even zero
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(3.f, -25)), 0x0002);       // 1.5 units: tie to even 2
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1023.5f, -24)), 0x0400);   // carries into the normals
  EXPECT_EQ(float_to_fp16_bits(1.f + std::ldexp(1.f, -11)), 0x3c00);  // tie to even 1.0
  EXPECT_EQ(float_to_fp16_bits(-0.f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(1.f + std::ldexp(1.f, -8)), 0x3f80);  // tie to even 1.0
  EXPECT_EQ(float_to_bf16_bits(1.f + std::ldexp(3.f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float(bfloat16(2.5f)), 2.5f);
  EXPECT_EQ(float(float16(-0.375f)), -0.375f);
  EXPECT_EQ(float(float16(0.1f)), fp16_bits_to_float(0x2e66));
}
