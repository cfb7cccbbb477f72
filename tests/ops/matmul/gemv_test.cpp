// The GEMV paths of matmul's Auto variant: one row times a matrix (m == 1) on every layout of B it
// distinguishes, and a matrix times a column vector (n == 1, routed as its transpose) on every
// layout of A, single and batched.
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
  packed.impl = "packed";
  EXPECT_TRUE(ember::testing::all_close(matmul(a, b), matmul(a, b, packed), 1e-12, 1e-12));
  EXPECT_TRUE(ember::testing::grad_ok([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                                      {normal({1, 4}, 0, 1, DType::Float64, &g), normal({4, 3}, 0, 1, DType::Float64, &g)}));
}

namespace {
// float64 reference of a (M x K, any strides) times b (K x 1) by plain loops.
std::vector<double> ref_col(const Tensor& a, const Tensor& b) {
  int64_t m = a.size(0), k = a.size(1);
  std::vector<double> out(size_t(m), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) out[size_t(i)] += a.at({i, p}) * b.at({p, 0});
  return out;
}
}  // namespace

TEST(MatmulGemv, ColumnVectorMatchesReferenceForEveryLayoutOfA) {
  // m = 1000 with k = 300 is split between threads; k straddles the 8- and 32-lane steps.
  for (int64_t k : {1, 7, 33, 300})
    for (int64_t m : {1, 5, 17, 1000})
      for (DType dt : {DType::Float32, DType::Float64}) {
        Generator g(uint64_t(k * 7919 + m));
        Tensor row_major = normal({m, k}, 0, 1, dt, &g);
        Tensor transposed = normal({k, m}, 0, 1, dt, &g).t();                       // a_rs == 1
        Tensor strided = normal({m, 2 * k}, 0, 1, dt, &g).slice(1, 0, 2 * k, 2);   // neither stride is 1
        Tensor padded = normal({m, k + 3}, 0, 1, dt, &g).slice(1, 0, k);            // row stride > k
        Tensor b = normal({k, 1}, 0, 1, dt, &g);
        Tensor b_strided = normal({k, 3}, 0, 1, dt, &g).slice(1, 2, 3);             // b's row stride is 3
        double tol = dt == DType::Float32 ? 1e-4 : 1e-12;
        for (const Tensor& a : {row_major, transposed, strided, padded})
          for (const Tensor& x : {b, b_strided}) {
            Tensor c = matmul(a, x);
            ASSERT_EQ(c.shape(), (Shape{m, 1}));
            std::vector<double> want = ref_col(a, x), got = c.to_vector<double>();
            for (int64_t i = 0; i < m; ++i)
              ASSERT_NEAR(got[size_t(i)], want[size_t(i)], tol * (1 + std::abs(want[size_t(i)])))
                  << "k " << k << " m " << m << " i " << i << " a strides " << to_string(a.strides()) << " b strides "
                  << to_string(x.strides());
            // The 1-d form takes the same path.
            std::vector<double> got1 = matmul(a, x.squeeze(-1)).to_vector<double>();
            for (int64_t i = 0; i < m; ++i) ASSERT_NEAR(got1[size_t(i)], want[size_t(i)], tol * (1 + std::abs(want[size_t(i)])));
          }
      }
}

TEST(MatmulGemv, BatchedColumnVectorsAndGradientsAgreeWithPacked) {
  Generator g(11);
  MatmulOptions packed;
  packed.impl = "packed";
  for (DType dt : {DType::Float64, DType::Float32}) {
    double tol = dt == DType::Float32 ? 1e-4 : 1e-12;
    Tensor a = normal({3, 2, 37, 300}, 0, 1, dt, &g), shared = normal({300, 1}, 0, 1, dt, &g);
    Tensor own = normal({3, 2, 300, 1}, 0, 1, dt, &g), v = normal({300}, 0, 1, dt, &g);
    // One shared vector (folded into one tall GEMV), a vector per matrix, a 1-d vector, a broadcast A.
    EXPECT_TRUE(ember::testing::all_close(matmul(a, shared), matmul(a, shared, packed), tol, tol));
    EXPECT_TRUE(ember::testing::all_close(matmul(a, own), matmul(a, own, packed), tol, tol));
    EXPECT_TRUE(ember::testing::all_close(matmul(a, v), matmul(a, v.unsqueeze(-1), packed).squeeze(-1), tol, tol));
    Tensor a_t = normal({3, 2, 300, 37}, 0, 1, dt, &g).transpose(-2, -1);  // not contiguous: per-matrix GEMVs
    EXPECT_TRUE(ember::testing::all_close(matmul(a_t, shared), matmul(a_t, shared, packed), tol, tol));
    Tensor a2 = normal({37, 300}, 0, 1, dt, &g);
    EXPECT_TRUE(ember::testing::all_close(matmul(a2, own), matmul(a2, own, packed), tol, tol));
  }
  EXPECT_TRUE(ember::testing::grad_ok([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                                      {normal({2, 5, 4}, 0, 1, DType::Float64, &g), normal({4, 1}, 0, 1, DType::Float64, &g)}));
}
