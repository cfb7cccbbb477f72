// framework/core/random.h: seeded generators, their statistics, and bad arguments.
#include <cmath>

#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// The mean and (population) variance of a tensor's elements, computed in double.
std::pair<double, double> moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  double m = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  double var = 0;
  for (double x : v) var += (x - m) * (x - m);
  return {m, var / double(v.size())};
}


// splitmix64's output mixing is a bijection; this inverts it so that a test can pick the seed whose
// first draw is a given 64-bit value (here the largest, i.e. uniform() just below 1).
uint64_t inverse_odd(uint64_t a) {  // a^-1 mod 2^64 by Newton's iteration
  uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
uint64_t unxorshift(uint64_t y, int s) {
  uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ (x >> s);
  return x;
}
uint64_t seed_for_first_draw(uint64_t z) {
  z = unxorshift(z, 31);
  z *= inverse_odd(0x94d049bb133111ebULL);
  z = unxorshift(z, 27);
  z *= inverse_odd(0xbf58476d1ce4e5b9ULL);
  z = unxorshift(z, 30);
  return z - 0x9e3779b97f4a7c15ULL;
}

}  // namespace

TEST(TensorRandom, SeededGeneratorsAreDeterministic) {
  Generator g1(42), g2(42), g3(43);
  Tensor a = randn({50}, DType::Float64, &g1), b = randn({50}, DType::Float64, &g2), c = randn({50}, DType::Float64, &g3);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), c.to_vector<double>());
  // The default generator restarts with manual_seed.
  manual_seed(7);
  std::vector<double> r1 = rand({20}, DType::Float64).to_vector<double>();
  std::vector<int64_t> i1 = randint({20}, -3, 4).to_vector<int64_t>();
  manual_seed(7);
  EXPECT_EQ(rand({20}, DType::Float64).to_vector<double>(), r1);
  EXPECT_EQ(randint({20}, -3, 4).to_vector<int64_t>(), i1);
  // Seeding resets Box-Muller's cached second value too.
  Generator g(5);
  g.normal();
  g.seed(5);
  Generator fresh(5);
  EXPECT_EQ(g.normal(), fresh.normal());
  // Float32 draws the same sequence, rounded.
  Generator h1(9), h2(9);
  std::vector<float> f = uniform({10}, -1, 1, DType::Float32, &h1).to_vector<float>();
  std::vector<double> d = uniform({10}, -1, 1, DType::Float64, &h2).to_vector<double>();
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], float(d[i]));
}

TEST(TensorRandom, RoughStatistics) {
  const int64_t n = 20000;
  Generator g(123);
  Tensor u = rand({n}, DType::Float64, &g);
  auto [um, uv] = moments(u);
  EXPECT_NEAR(um, 0.5, 0.01);
  EXPECT_NEAR(uv, 1.0 / 12, 0.005);
  std::vector<double> uvals = u.to_vector<double>();
  EXPECT_GE(*std::min_element(uvals.begin(), uvals.end()), 0.0);
  EXPECT_LT(*std::max_element(uvals.begin(), uvals.end()), 1.0);

  auto [nm, nv] = moments(randn({n}, DType::Float64, &g));
  EXPECT_NEAR(nm, 0.0, 0.03);
  EXPECT_NEAR(nv, 1.0, 0.04);

  auto [gm, gv] = moments(normal({n}, 3.0, 0.5, DType::Float32, &g));
  EXPECT_NEAR(gm, 3.0, 0.02);
  EXPECT_NEAR(gv, 0.25, 0.01);

  Tensor w = uniform({n}, -2.0, 6.0, DType::Float64, &g);
  auto [wm, wv] = moments(w);
  EXPECT_NEAR(wm, 2.0, 0.08);
  EXPECT_NEAR(wv, 64.0 / 12, 0.15);
  std::vector<double> wvals = w.to_vector<double>();
  EXPECT_GE(*std::min_element(wvals.begin(), wvals.end()), -2.0);
  EXPECT_LT(*std::max_element(wvals.begin(), wvals.end()), 6.0);

  Tensor r = randint({n}, -3, 4, &g);
  EXPECT_EQ(r.dtype(), DType::Int64);
  std::vector<int64_t> counts(7, 0);
  for (int64_t v : r.to_vector<int64_t>()) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++counts[size_t(v + 3)];
  }
  for (int64_t c : counts) EXPECT_NEAR(double(c) / n, 1.0 / 7, 0.015);
}

TEST(TensorRandom, BadArguments) {
  EXPECT_EMBER_ERROR(randint({3}, 4, 4), "randint");
  EXPECT_EMBER_ERROR(uniform({3}, 0, 1, DType::Int64), "uniform");
  EXPECT_EMBER_ERROR(normal({3}, 0, 1, DType::Int64), "normal");
}

TEST(TensorRandom, UniformStaysBelowItsUpperBoundInEveryDtype) {
  uint64_t seed = seed_for_first_draw(~uint64_t(0));
  Generator check(seed);
  ASSERT_EQ(check.next_u64(), ~uint64_t(0));  // the inversion is right
  for (DType dt : {DType::Float32, DType::Float64}) {
    Generator g(seed);
    EXPECT_LT(rand({1}, dt, &g).item(), 1.0) << dt;  // 1 - 2^-53 rounds to 1.0f in float32
    Generator h(seed);
    EXPECT_LT(uniform({1}, -3.0, 0.1, dt, &h).item(), dt == DType::Float32 ? double(0.1f) : 0.1) << dt;
  }
}
