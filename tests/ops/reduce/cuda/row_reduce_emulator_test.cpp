// The CUDA row reductions (sum, and max with its index, over the last dimension) run on the CPU by
// a block emulator: the very phases reduce.cu's kernels call (ops/reduce/cuda/row_reduce_phases.h),
// every thread's phase before any thread's next phase, which is exactly what each __syncthreads()
// guarantees. Shared memory starts with every bit set (NaN in float slots, -1 in indices), so a
// partial nobody wrote shows. Each result is checked against Ember's CPU kernels on awkward rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/reduce/cuda/row_reduce_phases.h"
#include "ops/reduce/reduce.h"

namespace ember {
namespace {

using cuda::kRowThreads;

enum class Barriers { All, None };

// One launch of a row kernel as reduce.cu makes it: grid = rows, block = kRowThreads. With
// Barriers::None each thread runs its whole program before the next thread starts: what the
// kernel could do without its barriers, used to show that the emulator notices.
template <class K, class T, class Store>
void emulate_rows(const T* x, int64_t rows, int64_t r, Store store, Barriers barriers = Barriers::All) {
  for (int64_t b = 0; b < rows; ++b) {
    typename K::Shared s;
    std::memset(static_cast<void*>(&s), 0xff, sizeof s);
    if (barriers == Barriers::All) {
      for (int t = 0; t < kRowThreads; ++t) K::fold(x, r, s, b, t, kRowThreads);
      for (int stride = kRowThreads / 2; stride > 0; stride >>= 1)
        for (int t = 0; t < kRowThreads; ++t) K::combine(s, t, stride);
    } else {
      for (int t = 0; t < kRowThreads; ++t) {
        K::fold(x, r, s, b, t, kRowThreads);
        for (int stride = kRowThreads / 2; stride > 0; stride >>= 1) K::combine(s, t, stride);
      }
    }
    for (int t = 0; t < kRowThreads; ++t) store(s, b, t);
  }
}

// Row lengths around the block's 256 threads and its tree's strides, and rows much longer.
const int64_t kLengths[] = {1, 2, 3, 31, 255, 256, 257, 511, 1000, 4099};
constexpr int64_t kRows = 3;

template <class T>
std::vector<T> random_rows(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& e : v) e = T(dist(rng));
  return v;
}

template <class T>
std::vector<T> emulated_sum(const std::vector<T>& x, int64_t rows, int64_t r, Barriers barriers = Barriers::All) {
  using K = cuda::SumRows<T>;
  std::vector<T> out(size_t(rows), std::numeric_limits<T>::quiet_NaN());
  emulate_rows<K>(x.data(), rows, r, [&](const typename K::Shared& s, int64_t b, int t) { K::store(out.data(), s, b, t); },
                  barriers);
  return out;
}

template <class T>
void check_sum() {
  for (int64_t r : kLengths) {
    std::vector<T> x = random_rows<T>(kRows * r, uint64_t(r));
    std::vector<T> got = emulated_sum(x, kRows, r);
    std::vector<double> want = sum(from_vector(x, {kRows, r}), {1}).template to_vector<double>();
    for (int64_t b = 0; b < kRows; ++b) {
      double mag = 0;
      for (int64_t k = 0; k < r; ++k) mag += std::fabs(double(x[size_t(b * r + k)]));
      // Both sum in double (float rows too), in different orders: (r + 1) u of the magnitudes,
      // plus the final rounding to T.
      double tol = (double(r) + 1) * std::numeric_limits<double>::epsilon() * mag +
                   std::numeric_limits<T>::epsilon() * std::fabs(want[size_t(b)]);
      EXPECT_NEAR(double(got[size_t(b)]), want[size_t(b)], tol) << "r=" << r << " row " << b;
    }
  }
}

TEST(RowReduceEmulator, SumMatchesTheCpuOnAwkwardRows) {
  check_sum<float>();
  check_sum<double>();
}

TEST(RowReduceEmulator, IntegerSumIsExact) {
  for (int64_t r : kLengths) {
    std::vector<int64_t> x(size_t(kRows * r));
    std::mt19937_64 rng(uint64_t(r) + 7);
    for (int64_t& e : x) e = int64_t(rng() % 2001) - 1000;
    std::vector<int64_t> got = emulated_sum(x, kRows, r);
    EXPECT_EQ(got, sum(from_vector(x, {kRows, r}), {1}).to_vector<int64_t>()) << "r=" << r;
  }
}

template <class T>
void check_max(std::vector<T> x, int64_t r, const char* what) {
  using K = cuda::MaxRows<T>;
  std::vector<T> vals(size_t(kRows), T(-7));
  std::vector<int64_t> idx(size_t(kRows), -7);
  emulate_rows<K>(x.data(), kRows, r,
                  [&](const typename K::Shared& s, int64_t b, int t) { K::store(vals.data(), idx.data(), s, b, t); });
  Tensor xt = from_vector(x, {kRows, r});
  std::vector<double> want_v = max(xt, 1).template to_vector<double>();
  std::vector<int64_t> want_i = argmax(xt, 1).to_vector<int64_t>();
  for (int64_t b = 0; b < kRows; ++b) {
    if (std::isnan(want_v[size_t(b)]))
      EXPECT_TRUE(std::isnan(double(vals[size_t(b)]))) << what << " r=" << r << " row " << b;
    else
      EXPECT_EQ(double(vals[size_t(b)]), want_v[size_t(b)]) << what << " r=" << r << " row " << b;
    EXPECT_EQ(idx[size_t(b)], want_i[size_t(b)]) << what << " r=" << r << " row " << b;
  }
}

template <class T>
void check_max_all() {
  for (int64_t r : kLengths) {
    std::vector<T> x = random_rows<T>(kRows * r, uint64_t(r) + 11);
    check_max(x, r, "random");
    // Ties: the lowest index wins, as on the CPU, whichever threads hold the tied values.
    std::vector<T> tied = x;
    for (int64_t b = 0; b < kRows; ++b)
      for (int64_t k = 0; k < r; k += 3) tied[size_t(b * r + k)] = T(5);
    check_max(tied, r, "ties");
    // NaN propagates, and the first NaN's index is the answer.
    if (r >= 3) {
      std::vector<T> nans = x;
      for (int64_t b = 0; b < kRows; ++b) {
        nans[size_t(b * r + r - 1)] = std::numeric_limits<T>::quiet_NaN();
        nans[size_t(b * r + (r * (b + 1)) / 4)] = std::numeric_limits<T>::quiet_NaN();
      }
      check_max(nans, r, "NaN");
    }
  }
}

TEST(RowReduceEmulator, MaxAndItsIndexMatchTheCpuWithTiesAndNaN) {
  check_max_all<float>();
  check_max_all<double>();
}

// The emulator is only worth something if it catches a missing barrier: without them a thread
// combines partials other threads have not written yet (still poisoned) or not finished.
TEST(RowReduceEmulator, TheTreeWithoutBarriersIsCaught) {
  const int64_t r = 1000;
  std::vector<double> x = random_rows<double>(kRows * r, 3);
  std::vector<double> good = emulated_sum(x, kRows, r, Barriers::All);
  std::vector<double> bad = emulated_sum(x, kRows, r, Barriers::None);
  for (int64_t b = 0; b < kRows; ++b) {
    EXPECT_FALSE(std::isnan(good[size_t(b)]));
    EXPECT_TRUE(std::isnan(bad[size_t(b)]) || std::fabs(bad[size_t(b)] - good[size_t(b)]) > 1e-6) << "row " << b;
  }
}

}  // namespace
}  // namespace ember
