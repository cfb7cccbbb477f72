// The AVX2 GEMV kernels called directly, with each number of rows side by side they take (4 and 8),
// so that both are checked on every CPU, not only the one gemv_streams() picks here.
#include "ops/matmul/cpu/gemv_avx2.h"

#include <cmath>
#include <vector>

#include "ops/matmul/cpu/kernels.h"
#include "test_util.h"

using namespace ember;

#if defined(__x86_64__) || defined(__i386__)
namespace {

std::vector<float> random_floats(int64_t n, Generator& g) {
  return normal({n}, 0, 1, DType::Float32, &g).to_vector<float>();
}

bool avx2_here() { return cpu::best_cpu_isa() >= cpu::CpuIsa::Avx2; }

}  // namespace

TEST(GemvAvx2, StreamsArePickedOnceAndSupported) {
  const int s = cpu::gemv_streams();
  EXPECT_TRUE(s == 4 || s == 8) << s;
  EXPECT_EQ(cpu::gemv_streams(), s);
}

TEST(GemvAvx2, RowKernelMatchesFloat64ReferenceForEachStreamCount) {
  if (!avx2_here()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the kernels under test cannot run here";
  // k below, at and past multiples of 4 and 8 (the groups and their leftover rows); w past the
  // 16-float steps and their scalar tail; a strided, B's rows padded.
  for (int streams : {4, 8})
    for (int64_t k : {1, 3, 4, 7, 8, 9, 31, 300})
      for (int64_t w : {1, 15, 16, 17, 100}) {
        Generator g(uint64_t(streams * 100000 + k * 1000 + w));
        const int64_t a_stride = 3, ldb = w + 5;
        std::vector<float> a = random_floats(k * a_stride, g), b = random_floats(k * ldb, g), c(size_t(w), 123.f);
        cpu::gemv_rows_avx2(a.data(), a_stride, b.data(), ldb, k, w, c.data(), streams);
        for (int64_t j = 0; j < w; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p) want += double(a[size_t(p * a_stride)]) * b[size_t(p * ldb + j)];
          ASSERT_NEAR(c[size_t(j)], want, 1e-4 * (1 + std::abs(want)))
              << "streams " << streams << " k " << k << " w " << w << " j " << j;
        }
      }
}

TEST(GemvAvx2, DotKernelMatchesFloat64ReferenceForEachStreamCount) {
  if (!avx2_here()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the kernels under test cannot run here";
  // n below, at and past multiples of 4 and 8 (the rows taken one by one at the end); k past the
  // 8- and 32-float steps; B's rows padded.
  for (int streams : {4, 8})
    for (int64_t n : {1, 3, 4, 5, 8, 13, 64, 203})
      for (int64_t k : {1, 7, 8, 33, 300}) {
        Generator g(uint64_t(streams * 100000 + n * 1000 + k));
        const int64_t ldb = k + 3;
        std::vector<float> a = random_floats(k, g), b = random_floats(n * ldb, g), c(size_t(n), 123.f);
        cpu::gemv_dots_avx2(a.data(), b.data(), ldb, k, n, c.data(), streams);
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p) want += double(a[size_t(p)]) * b[size_t(j * ldb + p)];
          ASSERT_NEAR(c[size_t(j)], want, 1e-4 * (1 + std::abs(want)))
              << "streams " << streams << " n " << n << " k " << k << " j " << j;
        }
      }
}
TEST(GemvAvx2, FewRowDotKernelMatchesFloat64ReferenceForOneToThreeRows) {
  if (!avx2_here()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the kernels under test cannot run here";
  // One to three rows of A (rows padded), n below, at and past multiples of the four streams (the
  // rows of B taken one by one at the end), k past the 8- and 32-float steps, C's rows padded:
  // the padding must stay as it was.
  for (int rows : {1, 2, 3})
    for (int64_t n : {1, 3, 4, 5, 13, 203})
      for (int64_t k : {1, 7, 8, 33, 300}) {
        Generator g(uint64_t(rows * 100000 + n * 1000 + k));
        const int64_t a_rs = k + 2, ldb = k + 3, c_rs = n + 1;
        std::vector<float> a = random_floats(rows * a_rs, g), b = random_floats(n * ldb, g);
        std::vector<float> c(size_t(rows * c_rs), 123.f);
        cpu::gemm_dots_avx2(a.data(), a_rs, rows, b.data(), ldb, k, n, c.data(), c_rs);
        for (int i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t p = 0; p < k; ++p) want += double(a[size_t(i * a_rs + p)]) * b[size_t(j * ldb + p)];
            ASSERT_NEAR(c[size_t(i * c_rs + j)], want, 1e-4 * (1 + std::abs(want)))
                << "rows " << rows << " n " << n << " k " << k << " at " << i << "," << j;
          }
          EXPECT_EQ(c[size_t(i * c_rs + n)], 123.f) << "row " << i << "'s padding was written";
        }
      }
}

TEST(GemvAvx2, FewRowDotKernelRefusesMoreThanThreeRows) {
  if (!avx2_here()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the kernels under test cannot run here";
  std::vector<float> a(32, 1.f), b(32, 1.f), c(8, 0.f);
  EXPECT_EMBER_ERROR(cpu::gemm_dots_avx2(a.data(), 8, 4, b.data(), 8, 8, 2, c.data(), 2), "1 to 3 rows of A, got 4");
}
#else
TEST(GemvAvx2, NotBuiltOffX86) { GTEST_SKIP() << "the AVX2 GEMV kernels exist on x86 only"; }
#endif
