// bench_matmul's MKL peer (examples/matmul/mkl_peer.h): a library that is not there is refused with
// its path in the message, and, where the peer's torch is installed, MKL's products through it
// match a float64 reference for row-major, transposed and padded operands. Without torch (CI
// machines skip ./run.sh bench-deps) that part skips and says why.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "examples/common/peer_python.h"
#include "examples/matmul/mkl_peer.h"
#include "framework/core/error.h"
#include "framework/core/tensor.h"

namespace ember::matmul_bench {
namespace {

TEST(MklPeer, AMissingLibraryIsRefusedWithItsPath) {
  const MklPeer& p = open_mkl("/nonexistent/libtorch_cpu.so");
  if (p.ok()) GTEST_SKIP() << "MKL was opened earlier in this process (" << p.library << ")";
  EXPECT_NE(p.error.find("/nonexistent/libtorch_cpu.so"), std::string::npos) << p.error;
  GemmArgs g{1, 1, 1, nullptr, 1, 1, nullptr, 1, 1, nullptr, 1, DType::Float32};
  try {
    mkl_gemm(g);
    FAIL() << "mkl_gemm ran without MKL";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs MKL"), std::string::npos) << e.what();
  }
}

// `gemv`: through mkl_gemv (m or n is 1), else mkl_gemm.
template <class T>
void check(int64_t m, int64_t k, int64_t n, bool trans_a, bool trans_b, int64_t pad, bool gemv = false) {
  Generator gen(uint64_t(m * 131 + k * 17 + n));
  std::vector<T> a(size_t(m * (k + pad) + k * (m + pad))), b(size_t(k * (n + pad) + n * (k + pad)));
  for (auto& x : a) x = T(gen.normal());
  for (auto& x : b) x = T(gen.normal());
  const int64_t a_rs = trans_a ? 1 : k + pad, a_cs = trans_a ? m + pad : 1;
  const int64_t b_rs = trans_b ? 1 : n + pad, b_cs = trans_b ? k + pad : 1;
  std::vector<T> c(size_t(m * (n + pad)), T(12345));
  GemmArgs g{m, n, k, a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, c.data(), n + pad, dtype_of<T>::value};
  if (gemv) mkl_gemv(g);
  else mkl_gemm(g);
  const double rtol = std::is_same_v<T, float> ? 2e-5 : 1e-13;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = double(a[size_t(i * a_rs + p * a_cs)]) * double(b[size_t(p * b_rs + j * b_cs)]);
        ref += x, scale += std::abs(x);
      }
      ASSERT_LE(std::abs(double(c[size_t(i * (n + pad) + j)]) - ref), 1e-6 + rtol * scale)
          << m << "x" << k << "x" << n << " transA " << trans_a << " transB " << trans_b << " pad " << pad << " at " << i
          << "," << j << (gemv ? " (gemv)" : "");
    }
}

TEST(MklPeer, TorchsMklMatchesAFloat64Reference) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "not under a sanitizer: torch's libraries are not built for it";
#else
  const std::string python = bench::peer::default_python();
  const MklPeer& p = mkl_from_python(python);
  if (!p.ok()) GTEST_SKIP() << "no MKL peer here: " << p.error;
  EXPECT_NE(p.version.find("Math Kernel Library"), std::string::npos) << p.version;
  mkl_set_threads(2);
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {7, 33, 5}, {64, 300, 129}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int64_t pad : {0, 3}) {
          check<float>(m, k, n, ta, tb, pad);
          check<double>(m, k, n, ta, tb, pad);
        }
  // gemv: one row of A times B, or A times one column of B, every layout of the matrix; pad > 0
  // also strides the vectors (a row of a taller A, a column of a wider B).
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {1, 37, 53}, {61, 45, 1}, {1, 300, 7}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int64_t pad : {0, 3}) {
          check<float>(m, k, n, ta, tb, pad, true);
          check<double>(m, k, n, ta, tb, pad, true);
        }
  GemmArgs square{2, 2, 2, nullptr, 2, 1, nullptr, 2, 1, nullptr, 2, DType::Float32};
  EXPECT_THROW(mkl_gemv(square), Error);
#endif
}

}  // namespace
}  // namespace ember::matmul_bench
