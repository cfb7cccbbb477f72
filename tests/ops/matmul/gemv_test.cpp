// The m == 1 path of matmul's Auto variant, on every layout of B it distinguishes.
#include "test_util.h"

using namespace ember;

namespace {
// float64 reference by plain loops.
std::vector<double> ref(const Tensor& a, const Tensor& b) {
  int64_t k = b.size(0), n = b.size(1);
  std::vector<double> out(size_t(n), 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) out[size_t(j)] += a.at({0, p}) * b.at({p, j});
  return out;
}
}  // namespace

TEST(MatmulGemv, OneRowMatchesReferenceForEveryLayoutOfB) {
  // k and n straddle the SIMD kernels' steps (4 rows, 8 and 16 lanes, 4 dot products at a time);
  // n = 1000 with k = 300 is large enough to be split between threads.
  for (int64_t k : {1, 4, 7, 17, 33, 300})
    for (int64_t n : {1, 5, 15, 16, 17, 64, 1000})
      for (DType dt : {DType::Float32, DType::Float64}) {
        Generator g(uint64_t(k * 1000 + n));
        Tensor a = normal({1, k}, 0, 1, dt, &g);
        Tensor row_major = normal({k, n}, 0, 1, dt, &g);
        Tensor transposed = normal({n, k}, 0, 1, dt, &g).t();           // b_rs == 1
        Tensor strided = normal({k, 2 * n}, 0, 1, dt, &g).slice(1, 0, 2 * n, 2);  // neither stride is 1
        Tensor padded = normal({k, n + 3}, 0, 1, dt, &g).slice(1, 0, n);         // row stride > n
        Tensor padded_t = normal({n, k + 5}, 0, 1, dt, &g).slice(1, 0, k).t();    // column stride > k
        Tensor a_strided = normal({k, 3}, 0, 1, dt, &g).slice(1, 1, 2).t();       // a's column stride is 3
        double tol = dt == DType::Float32 ? 1e-4 : 1e-12;
        for (const Tensor& b : {row_major, transposed, strided, padded, padded_t}) {
          Tensor c = matmul(a, b);
          ASSERT_EQ(c.shape(), (Shape{1, n}));
          std::vector<double> want = ref(a, b), got = c.to_vector<double>();
          for (int64_t j = 0; j < n; ++j)
            ASSERT_NEAR(got[size_t(j)], want[size_t(j)], tol * (1 + std::abs(want[size_t(j)])))
                << "k " << k << " n " << n << " j " << j << " strides " << to_string(b.strides());
          std::vector<double> want_s = ref(a_strided, b), got_s = matmul(a_strided, b).to_vector<double>();
          for (int64_t j = 0; j < n; ++j)
            ASSERT_NEAR(got_s[size_t(j)], want_s[size_t(j)], tol * (1 + std::abs(want_s[size_t(j)])))
                << "strided a, k " << k << " n " << n << " j " << j << " strides " << to_string(b.strides());
        }
      }
}

TEST(MatmulGemv, BatchedSingleRowsAndGradientsAgreeWithPacked) {
  Generator g(9);
  Tensor a = normal({3, 1, 40}, 0, 1, DType::Float64, &g), b = normal({40, 17}, 0, 1, DType::Float64, &g);
  MatmulOptions packed;
  packed.impl = MatmulImpl::Packed;
  EXPECT_TRUE(ember::testing::all_close(matmul(a, b), matmul(a, b, packed), 1e-12, 1e-12));
  EXPECT_TRUE(ember::testing::grad_ok([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                                      {normal({1, 4}, 0, 1, DType::Float64, &g), normal({4, 3}, 0, 1, DType::Float64, &g)}));
}
