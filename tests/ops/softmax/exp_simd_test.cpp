// The vectorised exp behind the softmax family's float rows (AVX2 and AVX-512 kernels, each on
// CPUs that have it), and the rows that must avoid it.
#include "ops/softmax/cpu/exp_simd.h"

#include <cmath>
#include <limits>

#include "ops/common/cpu/avx2_math.h"
#include "ops/common/cpu/avx512_math.h"
#include "test_util.h"

using namespace ember;

namespace {

// The row kernels of one instruction set, for the ISAs this CPU runs.
struct RowKernels {
  const char* name;
  bool (*max_sum)(const float*, int64_t, float&, double&);
  bool (*softmax_row)(const float*, int64_t, float*);
  void (*exp_scale)(const float*, int64_t, float, float, float*);
  float (*exp_one)(float);
};

std::vector<RowKernels> supported_kernels() {
  std::vector<RowKernels> ks;
#if defined(EMBER_HAVE_AVX2_MATH) && defined(EMBER_HAVE_AVX512_MATH)
  if (cpu::avx2::avx2_fma_available())
    ks.push_back({"avx2", cpu::rows_avx2::max_sum, cpu::rows_avx2::softmax_row, cpu::rows_avx2::exp_scale, cpu::rows_avx2::exp_one});
  if (cpu::avx512::avx512_available())
    ks.push_back({"avx512", cpu::rows_avx512::max_sum, cpu::rows_avx512::softmax_row, cpu::rows_avx512::exp_scale,
                  cpu::rows_avx512::exp_one});
#endif
  return ks;
}

}  // namespace

TEST(SoftmaxExpSimd, EachInstructionSetMatchesFloat64OnEveryTailLength) {
  std::vector<RowKernels> ks = supported_kernels();
  if (ks.empty()) GTEST_SKIP() << "this CPU has neither AVX2/FMA nor AVX-512; the scalar path is used";
  for (const RowKernels& k : ks) {
    double worst = 0;
    for (double x = -87.3; x <= 0.0; x += 0.00731) {
      float xf = float(x);
      double want = std::exp(double(xf));
      worst = std::max(worst, std::abs(double(k.exp_one(xf)) - want) / want);
    }
    EXPECT_LT(worst, 3e-7) << k.name;
    EXPECT_EQ(k.exp_one(-100.0f), 0.0f) << k.name;
    for (int64_t len : {1, 7, 8, 9, 15, 16, 17, 33, 1000}) {
      Generator g(uint64_t(len) + 11);
      std::vector<float> row = normal({len}, 0, 5, DType::Float32, &g).to_vector<float>();
      double mx = -1e300, sum = 0;
      for (float v : row) mx = std::max(mx, double(v));
      for (float v : row) sum += std::exp(double(v) - mx);
      float m = 0;
      double s = 0;
      ASSERT_TRUE(k.max_sum(row.data(), len, m, s)) << k.name;
      EXPECT_EQ(double(m), mx) << k.name;
      EXPECT_NEAR(s, sum, 1e-6 * sum) << k.name << " len " << len;
      std::vector<float> dst(size_t(len) + 3, -5.0f), scaled(size_t(len) + 3, -5.0f);
      ASSERT_TRUE(k.softmax_row(row.data(), len, dst.data())) << k.name;
      k.exp_scale(row.data(), len, float(mx), 2.0f, scaled.data());
      for (int64_t i = 0; i < len; ++i) {
        double p = std::exp(double(row[size_t(i)]) - mx) / sum;
        EXPECT_NEAR(dst[size_t(i)], p, 1e-6 * p + 1e-12) << k.name << " len " << len << " i " << i;
        EXPECT_NEAR(scaled[size_t(i)], 2 * p * sum, 2e-6 * p * sum + 1e-12) << k.name << " len " << len << " i " << i;
      }
      for (size_t i = size_t(len); i < dst.size(); ++i) {
        EXPECT_EQ(dst[i], -5.0f) << k.name << " wrote past the row, len " << len;
        EXPECT_EQ(scaled[i], -5.0f) << k.name << " wrote past the row, len " << len;
      }
    }
    std::vector<float> bad = {1, 2, std::numeric_limits<float>::quiet_NaN(), 4};
    float m = 0;
    double s = 0;
    EXPECT_FALSE(k.max_sum(bad.data(), 4, m, s)) << k.name << ": a NaN row goes to the scalar path";
    std::vector<float> all_inf(20, -std::numeric_limits<float>::infinity());
    EXPECT_FALSE(k.max_sum(all_inf.data(), 20, m, s)) << k.name << ": no finite maximum";
  }
}

TEST(SoftmaxExpSimd, RelativeErrorIsWithinAFewUlps) {
  if (!cpu::have_simd_exp()) GTEST_SKIP() << "this CPU has neither AVX2/FMA nor AVX-512; the scalar path is used";
  double worst = 0;
  for (double x = -87.3; x <= 0.0; x += 0.00731) {
    float xf = float(x);
    double want = std::exp(double(xf)), got = cpu::exp_simd_scalar_check(xf);
    worst = std::max(worst, std::abs(got - want) / want);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(cpu::exp_simd_scalar_check(-100.0f), 0.0f);
}

TEST(SoftmaxExpSimd, FloatRowsMatchFloat64AcrossLengthsAndTails) {
  for (int64_t len : {1, 7, 8, 9, 33, 1000}) {
    Generator g(static_cast<uint64_t>(len) + 1);
    Tensor x = normal({3, len}, 0, 6, DType::Float64, &g);
    Tensor xf = x.to(DType::Float32);
    EXPECT_TRUE(ember::testing::all_close(softmax(xf, -1), softmax(x, -1), 1e-9, 2e-6)) << len;
    EXPECT_TRUE(ember::testing::all_close(log_softmax(xf, -1), log_softmax(x, -1), 2e-6, 2e-6)) << len;
    EXPECT_TRUE(ember::testing::all_close(logsumexp(xf, -1), logsumexp(x, -1), 2e-6, 2e-6)) << len;
  }
}

TEST(SoftmaxExpSimd, NanAndInfiniteRowsKeepTheirDefinedResults) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, nan,  // NaN row -> NaN
                                            -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
                                            0, -inf, 1, 2, 3, 4, 5, 6, 7, 8},
                         {3, 10});
  Tensor s = softmax(x, -1);
  EXPECT_TRUE(std::isnan(s.at({0, 0})));
  EXPECT_TRUE(std::isnan(s.at({1, 0})));  // 0/0, as exp(-inf - -inf) is undefined
  EXPECT_EQ(s.at({2, 1}), 0.0);
  double total = 0;
  for (int64_t k = 0; k < 10; ++k) total += s.at({2, k});
  EXPECT_NEAR(total, 1.0, 1e-6);
}
