// The AVX2 exp behind the softmax family's float rows, and the rows that must avoid it.
#include "ops/softmax/cpu/exp_avx2.h"

#include <cmath>
#include <limits>

#include "test_util.h"

using namespace ember;

TEST(SoftmaxExpAvx2, RelativeErrorIsWithinAFewUlps) {
  if (!cpu::have_avx2_fma()) GTEST_SKIP() << "this CPU has no AVX2/FMA; the scalar path is used";
  double worst = 0;
  for (double x = -87.3; x <= 0.0; x += 0.00731) {
    float xf = float(x);
    double want = std::exp(double(xf)), got = cpu::exp_avx2_scalar_check(xf);
    worst = std::max(worst, std::abs(got - want) / want);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(cpu::exp_avx2_scalar_check(-100.0f), 0.0f);
}

TEST(SoftmaxExpAvx2, FloatRowsMatchFloat64AcrossLengthsAndTails) {
  for (int64_t len : {1, 7, 8, 9, 33, 1000}) {
    Generator g(static_cast<uint64_t>(len) + 1);
    Tensor x = normal({3, len}, 0, 6, DType::Float64, &g);
    Tensor xf = x.to(DType::Float32);
    EXPECT_TRUE(ember::testing::all_close(softmax(xf, -1), softmax(x, -1), 1e-9, 2e-6)) << len;
    EXPECT_TRUE(ember::testing::all_close(log_softmax(xf, -1), log_softmax(x, -1), 2e-6, 2e-6)) << len;
    EXPECT_TRUE(ember::testing::all_close(logsumexp(xf, -1), logsumexp(x, -1), 2e-6, 2e-6)) << len;
  }
}

TEST(SoftmaxExpAvx2, NanAndInfiniteRowsKeepTheirDefinedResults) {
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
