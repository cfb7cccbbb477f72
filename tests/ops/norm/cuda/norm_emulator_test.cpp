// The CUDA norm kernels (layer norm: one block per row; batch norm's statistics: one block per
// channel) run on the CPU by a block emulator: the very phases layer_norm.cu and batch_norm.cu call
// (ops/norm/cuda/norm_phases.h), every thread's phase before any thread's next one, which is what
// each __syncthreads() guarantees. Shared memory starts as NaN. Checked against the CPU kernels on
// awkward sizes, with a large mean (the shift against cancellation) and with and without affine.
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/norm/cpu/batch_norm_kernels.h"
#include "ops/norm/cpu/layer_norm_kernels.h"
#include "ops/norm/cuda/norm_phases.h"

namespace ember {
namespace {

using cuda::kRowThreads;

template <class T>
std::vector<T> random_values(int64_t n, uint64_t seed, double mean, double sd) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(mean, sd);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& e : v) e = T(dist(rng));
  return v;
}

// Runs fold, the combine tree and then `last` for every thread of one block, barriers between.
template <class K, class Fold, class Last>
void emulate_block(Fold fold, Last last) {
  typename K::Shared s;
  std::memset(static_cast<void*>(&s), 0xff, sizeof s);  // NaN in every slot
  for (int t = 0; t < kRowThreads; ++t) fold(s, t);
  for (int stride = kRowThreads / 2; stride > 0; stride >>= 1)
    for (int t = 0; t < kRowThreads; ++t) K::combine(s, t, stride);
  for (int t = 0; t < kRowThreads; ++t) last(s, t);
}

template <class T>
void expect_close(const std::vector<T>& got, const Tensor& want_t, double tol, const std::string& what) {
  std::vector<double> want = want_t.template to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(double(got[i]), want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " i=" << i;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-10;
}

template <class T>
void check_layer_norm(int64_t rows, int64_t n, bool affine, double mean) {
  using K = cuda::LayerNormRow<T>;
  std::vector<T> x = random_values<T>(rows * n, uint64_t(rows * 1000 + n), mean, 2.0);
  std::vector<T> w = random_values<T>(n, 5, 1.0, 0.5), b = random_values<T>(n, 6, 0.0, 0.5);
  std::vector<T> out(size_t(rows * n), T(-7)), mu(size_t(rows), T(-7)), rs(size_t(rows), T(-7));
  const double eps = 1e-5;
  for (int64_t blk = 0; blk < rows; ++blk)
    emulate_block<K>([&](typename K::Shared& s, int t) { K::fold(x.data(), n, s, blk, t, kRowThreads); },
                     [&](const typename K::Shared& s, int t) {
                       K::write(x.data(), affine ? w.data() : nullptr, 1, affine ? b.data() : nullptr, 1, out.data(),
                                mu.data(), rs.data(), n, eps, s, blk, t, kRowThreads);
                     });
  Tensor wt = affine ? from_vector(w, {n}) : Tensor(), bt = affine ? from_vector(b, {n}) : Tensor();
  Tensor want_mean, want_rstd;
  Tensor want = cpu::layer_norm(from_vector(x, {rows, n}), wt, bt, eps, &want_mean, &want_rstd);
  const std::string what = "layer_norm rows=" + std::to_string(rows) + " n=" + std::to_string(n);
  expect_close(out, want, tolerance<T>(), what + " out");
  expect_close(mu, want_mean, tolerance<T>(), what + " mean");
  expect_close(rs, want_rstd, tolerance<T>(), what + " rstd");
}

TEST(NormEmulator, LayerNormMatchesTheCpuOnAwkwardRows) {
  for (int64_t n : {1, 2, 3, 31, 255, 256, 257, 1000, 4099}) {
    check_layer_norm<float>(3, n, true, 0.0);
    check_layer_norm<float>(2, n, false, 1000.0);
    check_layer_norm<double>(3, n, true, 1000.0);
    check_layer_norm<double>(1, n, false, 0.0);
  }
}

template <class T>
void check_batch_norm(int64_t n, int64_t c, int64_t s, bool affine) {
  using K = cuda::BatchNormChannel<T>;
  std::vector<T> x = random_values<T>(n * c * s, uint64_t(n * 100 + c * 10 + s), 50.0, 3.0);
  std::vector<T> w = random_values<T>(c, 7, 1.0, 0.5), b = random_values<T>(c, 8, 0.0, 0.5);
  std::vector<T> mean(size_t(c), T(-7)), rstd(size_t(c), T(-7)), var(size_t(c), T(-7));
  std::vector<T> scale(size_t(c), T(-7)), shift(size_t(c), T(-7));
  const double eps = 1e-5;
  const T* wp = affine ? w.data() : nullptr;
  const T* bp = affine ? b.data() : nullptr;
  for (int64_t ch = 0; ch < c; ++ch)
    emulate_block<K>([&](typename K::Shared& sh, int t) { K::fold(x.data(), n, c, s, sh, ch, t, kRowThreads); },
                     [&](const typename K::Shared& sh, int t) {
                       K::finish(x.data(), wp, bp, n, s, eps, mean.data(), rstd.data(), var.data(), scale.data(),
                                 shift.data(), sh, ch, t);
                     });
  // batch_norm.cu's second kernel, elementwise: y = x * scale + shift per channel.
  std::vector<T> y(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    const int64_t ch = (int64_t(e) / s) % c;
    y[e] = x[e] * scale[size_t(ch)] + shift[size_t(ch)];
  }
  Tensor wm, wr, wv;
  Tensor want = cpu::batch_norm_train(from_vector(x, {n, c, s}), affine ? from_vector(w, {c}) : Tensor(),
                                      affine ? from_vector(b, {c}) : Tensor(), eps, &wm, &wr, &wv);
  const std::string what = "batch_norm " + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(s);
  expect_close(mean, wm, tolerance<T>(), what + " mean");
  expect_close(rstd, wr, tolerance<T>(), what + " rstd");
  expect_close(var, wv, tolerance<T>(), what + " var");
  expect_close(y, want, tolerance<T>() * 50, what + " y");  // |x| ~ 50: y = x * scale + shift cancels
}

TEST(NormEmulator, BatchNormStatisticsMatchTheCpuOnAwkwardShapes) {
  for (auto [n, c, s] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 3, 5}, {7, 2, 37}, {3, 4, 100}, {1, 2, 1000}, {257, 3, 1}}) {
    check_batch_norm<float>(n, c, s, true);
    check_batch_norm<double>(n, c, s, false);
  }
}

}  // namespace
}  // namespace ember
