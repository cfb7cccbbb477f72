// The row operations of the CPU FlashAttention-2 (ops/attention/cpu/flash2_rows.h) on every
// instruction set this CPU has, against float64 arithmetic: the forward's lazy online softmax down
// the columns of a block (the max it keeps, exp in place, alpha, the running sum, exact zeros
// where a query sees no key, what it reports), and the backward's P and dS along a row.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/attention/cpu/flash2_rows.h"
#include "test_util.h"

using namespace ember;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr double kLn256 = 5.545177444479562;

std::vector<cpu::CpuIsa> isas() {
  std::vector<cpu::CpuIsa> v;
  for (int i = 0; i <= int(cpu::best_cpu_isa()); ++i) v.push_back(cpu::CpuIsa(i));
  return v;
}

struct Block {
  std::vector<float> s, m, l, alpha;
  std::vector<int32_t> lim;
};

// rows x nr scores in [-30, 30], with a few far below (exp underflows) and -inf; running maxima
// either -inf (a query that has seen no key: l = 0) or near the block's scores, above or below.
Block random_block(int64_t rows, int64_t nr, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-30, 30);
  Block b;
  b.s.resize(size_t(rows * nr));
  for (float& x : b.s) x = u(gen);
  for (int i = 0; i < 30; ++i) b.s[size_t(gen() % b.s.size())] = i % 3 == 0 ? kNegInf : i % 3 == 1 ? -200.0f : -60.0f;
  b.m.resize(size_t(nr));
  b.l.resize(size_t(nr));
  b.alpha.assign(size_t(nr), -1.0f);
  b.lim.resize(size_t(nr));
  for (int64_t c = 0; c < nr; ++c) {
    const int kind = int(c % 4);
    b.m[size_t(c)] = kind == 0 ? kNegInf : kind == 1 ? 29.0f : kind == 2 ? 20.0f : 40.0f;
    b.l[size_t(c)] = kind == 0 ? 0.0f : 1.0f + float(c);
    b.lim[size_t(c)] = int32_t(c % 5 == 0 ? 0 : (c * 7) % (rows + 1));
  }
  return b;
}

}  // namespace

TEST(Flash2Rows, SoftmaxColsIsTheOnlineSoftmaxWithALazyMax) {
  const int64_t rows = 37, nr = 64;
  for (cpu::CpuIsa isa : isas())
    for (bool masked : {false, true}) {
      SCOPED_TRACE(str(cpu::name(isa), masked ? " masked" : " unmasked"));
      Block b = random_block(rows, nr, 11 + uint64_t(masked));
      const Block before = b;
      const bool moved = cpu::attn::flash2_rows<float>(isa).softmax_cols(
          b.s.data(), rows, nr, masked ? b.lim.data() : nullptr, b.m.data(), b.l.data(), b.alpha.data());
      bool any_moved = false;
      for (int64_t c = 0; c < nr; ++c) {
        const int64_t vis = masked ? before.lim[size_t(c)] : rows;
        double vmax = -INFINITY;
        for (int64_t r = 0; r < vis; ++r) vmax = std::max(vmax, double(before.s[size_t(r * nr + c)]));
        const double m_old = before.m[size_t(c)], m_new = b.m[size_t(c)];
        // The max moves to the block's only where that exceeds the old by more than ln 256.
        const double expect_m = vmax > m_old + kLn256 ? vmax : m_old;
        ASSERT_EQ(m_new, expect_m) << "column " << c;
        any_moved |= m_new != m_old;
        const double shift = std::isinf(m_new) ? 0.0 : m_new;
        double sum = 0;
        for (int64_t r = 0; r < rows; ++r) {
          const float got = b.s[size_t(r * nr + c)];
          if (r >= vis) {
            ASSERT_EQ(got, 0.0f) << "row " << r << " column " << c << " is not visible";
            continue;
          }
          const double x = double(before.s[size_t(r * nr + c)]) - shift, want = std::exp(x);
          ASSERT_LE(got, 256.0f * (1 + 1e-6));
          // The kernel's x is the float difference, off by up to half an ulp of x: a relative
          // error of |x| * 2^-24 in exp(x), on top of the exp's own 4e-7. Far below float's
          // normal range (2^-126) the result is 0, never a subnormal (which would slow every
          // multiply-add that reads it); just below, at most the smallest normal float.
          if (want < 1e-39) ASSERT_EQ(got, 0.0f) << "row " << r << " column " << c << ", x = " << x;
          else if (want < 1.2e-38) ASSERT_LE(got, 1.2e-38f) << "row " << r << " column " << c;
          else ASSERT_NEAR(got, want, (4e-7 + 6e-8 * std::abs(x)) * want) << "row " << r << " column " << c;
          sum += want;
        }
        const double alpha = std::isinf(m_old) ? 0.0 : std::exp(m_old - shift);
        EXPECT_NEAR(b.alpha[size_t(c)], alpha, 1e-6 * alpha) << "column " << c;
        const double l = alpha * before.l[size_t(c)] + sum;
        EXPECT_NEAR(b.l[size_t(c)], l, 1e-5 * l + 1e-30) << "column " << c;
      }
      EXPECT_EQ(moved, any_moved);
      EXPECT_TRUE(any_moved);  // the columns with m = -inf and m = 20 move
    }
}

TEST(Flash2Rows, SoftmaxColsReportsNoMoveWhenEveryMaxHolds) {
  // Every score within ln 256 of its query's running max (or below it): nothing moves, alpha is 1
  // exactly, and the caller may leave the accumulated output as it is.
  const int64_t rows = 20, nr = 64;
  for (cpu::CpuIsa isa : isas()) {
    SCOPED_TRACE(cpu::name(isa));
    Block b = random_block(rows, nr, 5);
    for (int64_t c = 0; c < nr; ++c) b.m[size_t(c)] = 30.0f - 5.0f * float(c % 2), b.l[size_t(c)] = 2.0f;
    EXPECT_FALSE(cpu::attn::flash2_rows<float>(isa).softmax_cols(b.s.data(), rows, nr, nullptr, b.m.data(),
                                                                 b.l.data(), b.alpha.data()));
    for (int64_t c = 0; c < nr; ++c) EXPECT_EQ(b.alpha[size_t(c)], 1.0f) << "column " << c;
  }
}

TEST(Flash2Rows, GradRowRecomputesPAndDs) {
  const int64_t nn = 77, hi = 61;
  const float scale = 0.3f, lse = 4.0f, dvec = 0.7f;
  for (cpu::CpuIsa isa : isas()) {
    SCOPED_TRACE(cpu::name(isa));
    std::mt19937_64 gen(9);
    std::uniform_real_distribution<float> u(-40, 40);
    std::vector<float> s(static_cast<size_t>(nn)), dp(static_cast<size_t>(nn));
    for (float& x : s) x = u(gen);
    for (float& x : dp) x = u(gen) / 10;
    s[3] = -1000.0f;  // exp underflows to 0
    const std::vector<float> s0 = s, dp0 = dp;
    cpu::attn::flash2_rows<float>(isa).grad_row(s.data(), dp.data(), hi, nn, scale, lse, dvec);
    for (int64_t j = 0; j < nn; ++j) {
      if (j >= hi) {
        EXPECT_EQ(s[size_t(j)], 0.0f);
        EXPECT_EQ(dp[size_t(j)], 0.0f);
        continue;
      }
      const double p = std::exp(double(scale) * s0[size_t(j)] - lse);
      const double ds = p * (double(dp0[size_t(j)]) - dvec);
      EXPECT_NEAR(s[size_t(j)], p, 1e-6 * p + 1e-38) << "p at " << j;
      EXPECT_NEAR(dp[size_t(j)], ds, 1e-5 * std::abs(ds) + 1e-37) << "dS at " << j;
    }
  }
}
