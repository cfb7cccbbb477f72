#include "ops/quant/quant_linear.h"

#include <cmath>

#include "framework/core/half.h"
#include "framework/core/parallel.h"
#include "ops/quant/cpu/kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::quant;
using namespace ember::testing;

namespace {

struct Ref {
  std::vector<double> y;    // float64 x . W^T + b, W as stored (dequantised)
  std::vector<double> abs;  // |x| . |W|^T: the scale of float32's rounding error
};

// The float64 product with the weights the kernels see, and x either as given or (for the
// integer-dot kernel) quantised per block of 32 as that kernel does, written here independently.
Ref reference(const Tensor& x2, const QuantizedMatrix& w, const Tensor& bias, bool quantise_x) {
  const int64_t m = x2.size(0), k = w.cols, n = w.rows;
  std::vector<double> x = x2.to_vector<double>();
  if (quantise_x)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t b = 0; b < k; b += 32) {
        double amax = 0;
        for (int64_t c = b; c < std::min(k, b + 32); ++c) amax = std::max(amax, std::fabs(x[size_t(i * k + c)]));
        // In float32 as the kernel's side does it, so that a value halfway between two steps
        // rounds the same way.
        const float s = float(amax) / 127.0f, inv = s > 0 ? 1.0f / s : 0.0f;
        for (int64_t c = b; c < std::min(k, b + 32); ++c)
          x[size_t(i * k + c)] = double(std::nearbyint(float(x[size_t(i * k + c)]) * inv)) * double(s);
      }
  std::vector<double> wd = dequantize(w).to_vector<double>(), bv;
  if (bias.defined()) bv = bias.to_vector<double>();
  Ref r{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bv.empty() ? 0 : bv[size_t(j)], a = std::fabs(s);
      for (int64_t c = 0; c < k; ++c) {
        s += x[size_t(i * k + c)] * wd[size_t(j * k + c)];
        a += std::fabs(x[size_t(i * k + c)] * wd[size_t(j * k + c)]);
      }
      r.y[size_t(i * n + j)] = s;
      r.abs[size_t(i * n + j)] = a;
    }
  return r;
}

std::vector<QuantKernel> kernels_here(WeightFormat f) {
  std::vector<QuantKernel> out;
  for (QuantKernel k : {QuantKernel::Auto, QuantKernel::Portable, QuantKernel::Avx2FewRows, QuantKernel::Avx2IntDots,
                        QuantKernel::Avx2Tiles})
    if (kernel_available(k, f)) out.push_back(k);
  return out;
}

// |y - ref| <= tol * |x|.|W| per element, tol = 5e-7 sqrt(K) (float32 rounding of a K-long sum, with
// room); one dropped or doubled term of a K-long sum would be about 1/K of |x|.|W|, far above it.
void expect_matches(const Tensor& y, const Ref& r, int64_t k, const std::string& what) {
  std::vector<double> yv = y.to_vector<double>();
  ASSERT_EQ(yv.size(), r.y.size()) << what;
  const double tol = 5e-7 * std::sqrt(double(k));
  for (size_t i = 0; i < yv.size(); ++i)
    ASSERT_LE(std::fabs(yv[i] - r.y[i]), tol * r.abs[i] + 1e-30) << what << " element " << i << ": " << yv[i]
                                                                  << " vs " << r.y[i];
}

}  // namespace

TEST(QuantLinear, EveryKernelMatchesFloat64OnAwkwardShapes) {
  struct Case { int64_t m, k, n; };
  const std::vector<Case> cases = {{1, 1, 1},    {3, 31, 7},    {64, 33, 50},  {129, 768, 7}, {1, 3072, 65},
                                   {2, 768, 129}, {5, 31, 257},  {4, 96, 26},   {129, 33, 23}, {3, 3072, 9},
                                   {64, 1, 7},   {1, 33, 50257}};
  for (const Case& c : cases)
    for (WeightFormat f : {WeightFormat::Int8Block32, WeightFormat::BFloat16}) {
      Tensor x = random({c.m, c.k}, uint64_t(c.m * 7 + c.k)).to(DType::Float32);
      Tensor w = random({c.n, c.k}, uint64_t(c.n + 3)).to(DType::Float32);
      Tensor b = random({c.n}, uint64_t(c.k + 11)).to(DType::Float32);
      QuantizedMatrix q = quantize(w, f);
      const Ref plain = reference(x, q, b, false);
      for (QuantKernel kern : kernels_here(f)) {
        if (kern == QuantKernel::Portable && c.n > 5000) continue;  // the slow loops on the 50257-row case
        const std::string what = str(format_name(f), " ", kernel_name(kern), " m ", c.m, " k ", c.k, " n ", c.n);
        if (kern == QuantKernel::Avx2IntDots || (kern == QuantKernel::Auto && chosen_kernel(f, c.m) == QuantKernel::Avx2IntDots)) {
          expect_matches(quant_linear(x, q, b, kern), reference(x, q, b, true), c.k, what);
        } else {
          expect_matches(quant_linear(x, q, b, kern), plain, c.k, what);
        }
      }
    }
}

TEST(QuantLinear, QuantisationErrorAgainstTheFloat32ProductIsBounded) {
  // int8: each weight is off by at most half its block's step s_b, so
  // |y_q - y| <= sum_k |x_k| s_b(k) / 2; bf16: by at most 2^-9 of itself.
  const int64_t m = 3, k = 768, n = 96;
  Tensor x = random({m, k}, 1).to(DType::Float32), w = (random({n, k}, 2) * 0.02).to(DType::Float32);
  Tensor y = matmul(x.to(DType::Float64), w.to(DType::Float64).t());
  std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), yv = y.to_vector<double>();
  for (WeightFormat f : {WeightFormat::Int8Block32, WeightFormat::BFloat16}) {
    QuantizedMatrix q = quantize(w, f);
    std::vector<double> yq = quant_linear(x, q).to_vector<double>();
    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double bound = 0;
        for (int64_t c = 0; c < k; ++c) {
          const double step = f == WeightFormat::Int8Block32
                                  ? 0.5 * double(fp16_bits_to_float(q.scale[size_t(j * q.blocks_per_row() + c / 32)]))
                                  : std::ldexp(std::fabs(wv[size_t(j * k + c)]), -9);
          bound += std::fabs(xv[size_t(i * k + c)]) * step;
        }
        const double e = yq[size_t(i * n + j)] - yv[size_t(i * n + j)];
        EXPECT_LE(std::fabs(e), bound * 1.001 + 1e-5) << format_name(f) << " (" << i << ", " << j << ")";
        err2 += e * e;
        ref2 += yv[size_t(i * n + j)] * yv[size_t(i * n + j)];
      }
    // Gaussian weights: int8's relative RMS error is about 1%, bf16's about 0.2%.
    EXPECT_LT(std::sqrt(err2 / ref2), f == WeightFormat::Int8Block32 ? 0.02 : 0.005) << format_name(f);
  }
}

TEST(QuantLinear, BatchedNonContiguousInputAndNoBias) {
  Tensor x = random({2, 5, 40}, 3).to(DType::Float32).transpose(0, 1);  // (5, 2, 40), strided
  QuantizedMatrix q = quantize(random({9, 40}, 4).to(DType::Float32), WeightFormat::Int8Block32);
  Tensor y = quant_linear(x, q);
  ASSERT_EQ(y.shape(), (Shape{5, 2, 9}));
  expect_matches(y.reshape({10, 9}), reference(x.contiguous().reshape({10, 40}), q, Tensor(), false), 40, "3-d");
}

TEST(QuantLinear, OneAndTwoThreadsGiveTheSameBits) {
  Tensor x = random({2, 768}, 5).to(DType::Float32);
  QuantizedMatrix q = quantize(random({3000, 768}, 6).to(DType::Float32), WeightFormat::Int8Block32);
  const int before = num_threads();
  set_num_threads(1);
  Tensor a = quant_linear(x, q);
  set_num_threads(2);
  Tensor b = quant_linear(x, q);
  set_num_threads(before);
  EXPECT_TRUE(all_close(a, b, 0, 0));
}

TEST(QuantLinear, ActivationQuantisationRoundTrips) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i) * 0.7)) * (i < 32 ? 1.0f : 100.0f);
  std::vector<int8_t> q(64);
  std::vector<float> s(2);
  cpu::quantize_activations(x.data(), 1, 64, q.data(), s.data());
  EXPECT_NEAR(s[1] / s[0], 100.0, 0.5);
  for (size_t i = 0; i < 64; ++i) EXPECT_LE(std::fabs(q[i] * s[i / 32] - x[i]), 0.5f * s[i / 32] * 1.0001f);
}

TEST(QuantLinear, RefusesBadInput) {
  QuantizedMatrix q = quantize(random({4, 8}, 1).to(DType::Float32), WeightFormat::BFloat16);
  EXPECT_EMBER_ERROR(quant_linear(random({2, 9}, 2).to(DType::Float32), q), "does not end in the weight's 8 inputs");
  EXPECT_EMBER_ERROR(quant_linear(random({2, 8}, 2), q), "expected a float32 CPU input");
  EXPECT_EMBER_ERROR(quant_linear(random({2, 8}, 2).to(DType::Float32), q, random({5}, 3).to(DType::Float32)),
                     "bias must be");
  EXPECT_EMBER_ERROR(quant_linear(random({2, 8}, 2).to(DType::Float32), QuantizedMatrix()), "not a quantised matrix");
  EXPECT_EMBER_ERROR(quant_linear(random({2, 8}, 2).to(DType::Float32), q, Tensor(), QuantKernel::Avx2IntDots),
                     "does not run here");
  Tensor x = random({2, 8}, 2).to(DType::Float32);
  x.requires_grad_();
  EXPECT_EMBER_ERROR(quant_linear(x * 2.0, q), "for inference");
}

// The few-row kernels (widening, and the integer dots for int8) stream several rows of W at once
// and the rest one at a time; each output's sum runs in the same order either way, so any split of
// the columns gives the same bits. k = 160 has five blocks, an odd count.
TEST(QuantLinear, FewRowKernelsGiveTheSameBitsForAnySplitOfTheColumns) {
  if (!kernel_available(QuantKernel::Avx2FewRows, WeightFormat::BFloat16)) GTEST_SKIP() << "no AVX2 + F16C here";
  struct Case {
    WeightFormat f;
    bool dots;
  };
  for (Case c : {Case{WeightFormat::BFloat16, false}, Case{WeightFormat::Int8Block32, false},
                 Case{WeightFormat::Int8Block32, true}})
    for (int64_t m : {1, 2, 3, 4}) {
      const int64_t k = 160, n = 53;
      Tensor x = random({m, k}, uint64_t(20 + m)).to(DType::Float32);
      QuantizedMatrix q = quantize(random({n, k}, 21).to(DType::Float32), c.f);
      std::vector<float> y(size_t(m * n)), z(size_t(m * n)), xs(size_t(m * q.blocks_per_row()));
      std::vector<int8_t> xq(size_t(m * k));
      cpu::Product p;
      p.x = x.data<float>();
      p.m = m;
      p.w = &q;
      if (c.dots) {
        cpu::quantize_activations(p.x, m, k, xq.data(), xs.data());
        p.xq = xq.data();
        p.xs = xs.data();
      }
      const auto run = [&](int64_t c0, int64_t c1) {
        c.dots ? cpu::product_int_dots_avx2(p, c0, c1) : cpu::product_few_rows_avx2(p, c0, c1);
      };
      p.y = y.data();
      p.ldy = n;
      run(0, n);
      p.y = z.data();
      for (int64_t c0 = 0; c0 < n;) {  // uneven pieces: some take the streams, some only the tail
        const int64_t c1 = std::min(n, c0 + 1 + (c0 % 11));
        run(c0, c1);
        c0 = c1;
      }
      const std::string what = str(format_name(c.f), c.dots ? " dots" : "", " m ", m);
      EXPECT_EQ(y, z) << what;
      expect_matches(from_vector(std::vector<double>(y.begin(), y.end()), {m, n}), reference(x, q, Tensor(), c.dots), k,
                     what);
    }
}
