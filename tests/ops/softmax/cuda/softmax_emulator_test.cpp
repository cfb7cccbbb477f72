// The CUDA row softmax kernels (softmax, log_softmax, logsumexp over the last dimension; the same
// block log-sum-exp serves cross-entropy) run on the CPU by a block emulator: the very phases the
// kernels call (RowMaxSum in ops/softmax/cuda/max_sum.h, SoftmaxRow in softmax_phases.h), every
// thread's phase before any thread's next one, which is what each __syncthreads() guarantees.
// Shared memory starts as NaN. Checked against Ember's CPU kernels on awkward rows, -inf and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/softmax/cuda/softmax_phases.h"
#include "ops/softmax/softmax.h"

namespace ember {
namespace {

using cuda::kRowThreads;
using cuda::SoftmaxKind;

// One launch as softmax.cu makes it: grid = rows, block = kRowThreads. Barriers::None runs each
// thread's whole program before the next thread's, to show that the emulator notices.
enum class Barriers { All, None };

template <class T>
std::vector<T> emulate_softmax(const std::vector<T>& x, int64_t rows, int64_t r, SoftmaxKind kind,
                               Barriers barriers = Barriers::All) {
  using K = cuda::RowMaxSum<T>;
  std::vector<T> out(size_t(kind == SoftmaxKind::LogSumExp ? rows : rows * r), std::numeric_limits<T>::quiet_NaN());
  for (int64_t b = 0; b < rows; ++b) {
    typename K::Shared s;
    std::memset(static_cast<void*>(&s), 0xff, sizeof s);  // NaN in every slot
    const T* row = x.data() + b * r;
    if (barriers == Barriers::All) {
      for (int t = 0; t < kRowThreads; ++t) K::fold(row, r, s, t, kRowThreads);
      for (int stride = kRowThreads / 2; stride > 0; stride >>= 1)
        for (int t = 0; t < kRowThreads; ++t) K::combine(s, t, stride);
      for (int t = 0; t < kRowThreads; ++t)
        cuda::SoftmaxRow<T>::write(x.data(), out.data(), r, kind, K::result(s), b, t, kRowThreads);
    } else {
      for (int t = 0; t < kRowThreads; ++t) {
        K::fold(row, r, s, t, kRowThreads);
        for (int stride = kRowThreads / 2; stride > 0; stride >>= 1) K::combine(s, t, stride);
        cuda::SoftmaxRow<T>::write(x.data(), out.data(), r, kind, K::result(s), b, t, kRowThreads);
      }
    }
  }
  return out;
}

const int64_t kLengths[] = {1, 2, 3, 31, 255, 256, 257, 1000, 4099};
constexpr int64_t kRows = 3;

template <class T>
std::vector<T> random_rows(int64_t n, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& e : v) e = T(dist(rng));
  return v;
}

template <class T>
void expect_matches_cpu(const std::vector<T>& x, int64_t r, const char* what) {
  Tensor xt = from_vector(x, {kRows, r});
  // Logarithms: both kernels round x - lse to T, the CPU's from T operands: a few ulps of the row's
  // largest |x|.
  const double eps = std::numeric_limits<T>::epsilon();
  std::vector<double> row_mag(size_t(kRows), 1.0);
  for (int64_t b = 0; b < kRows; ++b)
    for (int64_t k = 0; k < r; ++k)
      if (std::isfinite(double(x[size_t(b * r + k)])))
        row_mag[size_t(b)] = std::max(row_mag[size_t(b)], std::fabs(double(x[size_t(b * r + k)])));
  struct Case {
    SoftmaxKind kind;
    Tensor want;
  };
  for (const Case& c : {Case{SoftmaxKind::Softmax, softmax(xt, 1)}, Case{SoftmaxKind::LogSoftmax, log_softmax(xt, 1)},
                        Case{SoftmaxKind::LogSumExp, logsumexp(xt, 1)}}) {
    std::vector<T> got = emulate_softmax(x, kRows, r, c.kind);
    std::vector<double> want = c.want.template to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = double(got[i]), w = want[i];
      const int64_t row = c.kind == SoftmaxKind::LogSumExp ? int64_t(i) : int64_t(i) / r;
      // Probabilities: a few ulps of themselves (exp in double here, the CPU's own exp there, which
      // may flush a subnormal result to 0).
      const double tol = c.kind == SoftmaxKind::Softmax ? 16 * eps * std::fabs(w) + double(std::numeric_limits<T>::min())
                                                        : 8 * eps * std::max(std::fabs(w), row_mag[size_t(row)]);
      if (std::isnan(w) || std::isinf(w)) {
        EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w) << what << " kind " << int(c.kind) << " r=" << r << " i=" << i;
      } else {
        EXPECT_NEAR(g, w, tol) << what << " kind " << int(c.kind) << " r=" << r << " i=" << i;
      }
    }
  }
}

template <class T>
void check_all() {
  for (int64_t r : kLengths) {
    expect_matches_cpu(random_rows<T>(kRows * r, uint64_t(r), 3.0), r, "random");
    // Large values: the running max must keep exp() finite.
    expect_matches_cpu(random_rows<T>(kRows * r, uint64_t(r) + 1, 300.0), r, "large");
    // -inf entries (masked logits), one row entirely -inf, and a NaN in another.
    std::vector<T> m = random_rows<T>(kRows * r, uint64_t(r) + 2, 1.0);
    for (int64_t k = 0; k < r; k += 2) m[size_t(k)] = -std::numeric_limits<T>::infinity();
    for (int64_t k = 0; k < r; ++k) m[size_t(r + k)] = -std::numeric_limits<T>::infinity();
    m[size_t(2 * r + r / 2)] = std::numeric_limits<T>::quiet_NaN();
    expect_matches_cpu(m, r, "masked");
  }
}

TEST(SoftmaxEmulator, RowKernelsMatchTheCpuOnAwkwardRows) {
  check_all<float>();
  check_all<double>();
}

TEST(SoftmaxEmulator, TheMergeTreeWithoutBarriersIsCaught) {
  const int64_t r = 1000;
  std::vector<double> x = random_rows<double>(kRows * r, 5, 2.0);
  std::vector<double> good = emulate_softmax(x, kRows, r, SoftmaxKind::LogSumExp);
  std::vector<double> bad = emulate_softmax(x, kRows, r, SoftmaxKind::LogSumExp, Barriers::None);
  for (int64_t b = 0; b < kRows; ++b) {
    EXPECT_FALSE(std::isnan(good[size_t(b)]));
    EXPECT_TRUE(std::isnan(bad[size_t(b)]) || std::fabs(bad[size_t(b)] - good[size_t(b)]) > 1e-9) << "row " << b;
  }
}

}  // namespace
}  // namespace ember
