// The CUDA cross-entropy kernels (one block per row: the block's log-sum-exp, then the row's loss
// or its share of the gradient) run on the CPU by a block emulator: the very phases
// cross_entropy.cu calls (RowMaxSum in ops/softmax/cuda/max_sum.h, CrossEntropyRow in
// ops/loss/cuda/cross_entropy_phases.h), every thread's phase before any thread's next one. Shared
// memory starts as NaN. Checked against the CPU kernels on awkward class counts, and a bad target
// is reported without reading out of bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/loss/cpu/cross_entropy_kernels.h"
#include "ops/loss/cuda/cross_entropy_phases.h"

namespace ember {
namespace {

using cuda::kRowThreads;

// Row losses and the gradient of one batch of logits (rows x classes) as the two kernels compute
// them; `bad` collects the rows whose target a kernel reported.
template <class T>
struct Emulated {
  std::vector<double> loss;
  std::vector<T> grad;
  std::vector<int64_t> bad;
};

template <class T>
Emulated<T> emulate(const std::vector<T>& logits, const std::vector<int64_t>& targets, int64_t rows, int64_t classes,
                    double scale) {
  using K = cuda::RowMaxSum<T>;
  using E = cuda::CrossEntropyRow<T>;
  Emulated<T> e{std::vector<double>(size_t(rows), -7.0), std::vector<T>(size_t(rows * classes), T(-7)), {}};
  for (int64_t b = 0; b < rows; ++b) {
    typename K::Shared s;
    std::memset(static_cast<void*>(&s), 0xff, sizeof s);  // NaN in every slot
    const T* row = logits.data() + b * classes;
    for (int t = 0; t < kRowThreads; ++t) K::fold(row, classes, s, t, kRowThreads);
    for (int stride = kRowThreads / 2; stride > 0; stride >>= 1)
      for (int t = 0; t < kRowThreads; ++t) K::combine(s, t, stride);
    bool reported = false;
    for (int t = 0; t < kRowThreads; ++t) {
      if (!E::loss(logits.data(), targets.data(), e.loss.data(), classes, K::result(s), b, t)) reported = true;
      if (!E::gradient(logits.data(), targets.data(), e.grad.data(), classes, scale, K::result(s), b, t, kRowThreads))
        reported = true;
    }
    if (reported) e.bad.push_back(b);
  }
  return e;
}

template <class T>
void check(int64_t rows, int64_t classes, double spread) {
  std::mt19937_64 rng(uint64_t(rows * 1000 + classes));
  std::normal_distribution<double> dist(0.0, spread);
  std::vector<T> logits(size_t(rows * classes));
  for (T& v : logits) v = T(dist(rng));
  std::vector<int64_t> targets(static_cast<size_t>(rows));
  for (int64_t& t : targets) t = int64_t(rng() % uint64_t(classes));
  const double scale = 0.75 / double(rows);
  Emulated<T> got = emulate(logits, targets, rows, classes, scale);
  EXPECT_TRUE(got.bad.empty());
  Tensor lt = from_vector(logits, {rows, classes}), tt = from_vector(targets, {rows});
  // The forward's mean: cross_entropy.cu sums the row losses in double and divides once.
  double total = 0;
  for (double l : got.loss) total += l;
  const double want_mean = cpu::cross_entropy(lt, tt).template to_vector<double>()[0];
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  const std::string what = std::to_string(rows) + "x" + std::to_string(classes);
  EXPECT_NEAR(double(T(total / double(rows))), want_mean, tol * std::max(1.0, std::fabs(want_mean))) << what;
  std::vector<double> want_grad = cpu::cross_entropy_backward(lt, tt, scale).template to_vector<double>();
  ASSERT_EQ(want_grad.size(), got.grad.size());
  for (size_t i = 0; i < want_grad.size(); ++i)
    EXPECT_NEAR(double(got.grad[i]), want_grad[i], tol * scale) << what << " i=" << i;
}

TEST(CrossEntropyEmulator, LossAndGradientMatchTheCpuOnAwkwardClassCounts) {
  for (int64_t classes : {1, 2, 3, 31, 255, 256, 257, 1000, 4099}) {
    check<float>(3, classes, 2.0);
    check<double>(2, classes, 30.0);
  }
}

TEST(CrossEntropyEmulator, ABadTargetIsReportedAndNothingIsReadOutOfBounds) {
  const int64_t rows = 3, classes = 5;
  std::vector<double> logits(size_t(rows * classes), 0.5);
  for (int64_t bad : {-1, 5, 1000000}) {
    std::vector<int64_t> targets = {1, bad, 4};
    Emulated<double> got = emulate(logits, targets, rows, classes, 1.0);
    EXPECT_EQ(got.bad, std::vector<int64_t>({1})) << "target " << bad;
    EXPECT_EQ(got.loss[1], 0.0);
    for (int64_t k = 0; k < classes; ++k) EXPECT_EQ(got.grad[size_t(classes + k)], -7.0) << "row 1 left unwritten";
  }
}

}  // namespace
}  // namespace ember
