#include "ops/quant/quantized_matrix.h"

#include <cmath>
#include <limits>

#include "framework/core/half.h"
#include "test_util.h"

using namespace ember;
using namespace ember::quant;
using namespace ember::testing;

namespace {

Tensor weights(int64_t rows, int64_t cols, uint64_t seed) { return random({rows, cols}, seed).to(DType::Float32); }

}  // namespace

TEST(QuantizedMatrix, ParsesFormatNames) {
  EXPECT_EQ(parse_format("int8"), WeightFormat::Int8Block32);
  EXPECT_EQ(parse_format("bf16"), WeightFormat::BFloat16);
  EXPECT_EQ(parse_format("f32"), WeightFormat::Float32);
  EXPECT_STREQ(format_name(WeightFormat::Int8Block32), "int8");
  EXPECT_EMBER_ERROR(parse_format("int4"), "expected f32, bf16 or int8");
  EXPECT_EMBER_ERROR(parse_format(""), "unknown weight format");
}

TEST(QuantizedMatrix, Int8BlocksWithinHalfAStepOfEachWeight) {
  for (int64_t cols : {1, 31, 32, 33, 768, 100}) {
    Tensor w = weights(7, cols, uint64_t(cols));
    QuantizedMatrix m = quantize(w, WeightFormat::Int8Block32);
    ASSERT_EQ(m.rows, 7);
    ASSERT_EQ(m.cols, cols);
    ASSERT_EQ(m.kpad, (cols + 31) / 32 * 32);
    ASSERT_EQ(int64_t(m.q.size()), 7 * m.kpad);
    ASSERT_EQ(int64_t(m.scale.size()), 7 * m.kpad / 32);
    std::vector<float> v = w.to_vector<float>();
    for (int64_t r = 0; r < 7; ++r)
      for (int64_t b = 0; b < m.blocks_per_row(); ++b) {
        double amax = 0;
        int qmax = 0;
        for (int64_t c = b * 32; c < std::min(cols, b * 32 + 32); ++c) {
          amax = std::max(amax, std::fabs(double(v[size_t(r * cols + c)])));
          qmax = std::max(qmax, std::abs(int(m.q[size_t(r * m.kpad + c)])));
        }
        const double s = fp16_bits_to_float(m.scale[size_t(r * m.blocks_per_row() + b)]);
        EXPECT_NEAR(s, amax / 127, amax / 127 * 1e-3) << "scale = max|w| / 127, rounded to float16";
        EXPECT_GE(qmax, 126) << "the block's largest weight uses the full range";
        for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
          if (c >= cols) {
            EXPECT_EQ(m.q[size_t(r * m.kpad + c)], 0) << "padding past cols is zero";
            continue;
          }
          EXPECT_LE(std::fabs(double(m.at(r, c)) - v[size_t(r * cols + c)]), 0.5 * s * (1 + 1e-6))
              << "r " << r << " c " << c;
        }
      }
  }
}

TEST(QuantizedMatrix, BFloat16RoundsEachWeightToNearestEven) {
  Tensor w = weights(5, 33, 3);
  QuantizedMatrix m = quantize(w, WeightFormat::BFloat16);
  std::vector<float> v = w.to_vector<float>();
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 33; ++c) {
      const float x = v[size_t(r * 33 + c)];
      EXPECT_EQ(m.bf16[size_t(r * m.kpad + c)], float_to_bf16_bits(x));
      EXPECT_LE(std::fabs(m.at(r, c) - x), std::fabs(x) * std::ldexp(1.0, -8));
    }
    for (int64_t c = 33; c < m.kpad; ++c) EXPECT_EQ(m.bf16[size_t(r * m.kpad + c)], 0);
  }
  EXPECT_EQ(m.bytes(), 5 * 64 * 2);
}

TEST(QuantizedMatrix, TransposedStorageQuantisesTheTranspose) {
  Tensor w = weights(40, 9, 4);  // stored (in, out) as GPT-2's Conv1D keeps it
  for (WeightFormat f : {WeightFormat::Int8Block32, WeightFormat::BFloat16}) {
    QuantizedMatrix a = quantize(w, f, /*transposed=*/true), b = quantize(w.t().contiguous(), f);
    EXPECT_EQ(a.rows, 9);
    EXPECT_EQ(a.cols, 40);
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.scale, b.scale);
    EXPECT_EQ(a.bf16, b.bf16);
    EXPECT_TRUE(all_close(dequantize(a), dequantize(b), 0, 0));
  }
}

TEST(QuantizedMatrix, DequantiseMatchesAt) {
  QuantizedMatrix m = quantize(weights(3, 70, 5), WeightFormat::Int8Block32);
  Tensor d = dequantize(m);
  ASSERT_EQ(d.shape(), (Shape{3, 70}));
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 70; ++c) EXPECT_EQ(float(d.at({r, c})), m.at(r, c));
}

TEST(QuantizedMatrix, AllZeroBlockQuantisesToZero) {
  Tensor w = weights(2, 64, 6);
  for (int64_t c = 0; c < 32; ++c) w.set({0, c}, 0.0);
  QuantizedMatrix m = quantize(w, WeightFormat::Int8Block32);
  EXPECT_EQ(m.scale[0], 0);
  for (int64_t c = 0; c < 32; ++c) EXPECT_EQ(m.at(0, c), 0.0f);
}

TEST(QuantizedMatrix, RefusesBadWeights) {
  EXPECT_EMBER_ERROR(quantize(weights(2, 3, 1), WeightFormat::Float32), "expected bf16 or int8");
  EXPECT_EMBER_ERROR(quantize(random({2, 3}, 1), WeightFormat::Int8Block32), "expected a float32 CPU weight");
  EXPECT_EMBER_ERROR(quantize(weights(2, 3, 1).reshape({6}), WeightFormat::BFloat16), "expected a 2-d weight");
  EXPECT_EMBER_ERROR(quantize(Tensor(), WeightFormat::BFloat16), "undefined");
  EXPECT_EMBER_ERROR(quantize(empty({0, 4}), WeightFormat::BFloat16), "is empty");
  Tensor w = weights(2, 3, 1);
  w.set({1, 2}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EMBER_ERROR(quantize(w, WeightFormat::Int8Block32), "non-finite");
  w.set({1, 2}, std::numeric_limits<double>::infinity());
  EXPECT_EMBER_ERROR(quantize(w, WeightFormat::BFloat16), "non-finite");
  w.set({1, 2}, 1e7);  // 1e7 / 127 > 65504: no float16 scale
  EXPECT_EMBER_ERROR(quantize(w, WeightFormat::Int8Block32), "float16's range");
  EXPECT_NO_THROW(quantize(w, WeightFormat::BFloat16));
}
