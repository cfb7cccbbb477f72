// The small dense products on row-major tiles that the library's generation-step kernel
// (decode.cpp) and the attention study's Algorithms 0 and 1 (examples/attention/study/) are built
// from. Both study algorithms call the same loops, so that timing differences between them come
// from the algorithms (what they store, how often they touch memory), not from different kernels.
// Every inner loop runs along a contiguous row with no reduction, so g++ vectorises it at -O2/-O3
// without -ffast-math (a dot-product loop would need reassociation).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::cpu::attn {

// bt[kk * n + j] = b[j * ldb + kk]: a (n x k) tile of K or V, transposed into scratch (k x n).
template <class T>
inline void transpose_into(int64_t n, int64_t k, const T* b, int64_t ldb, T* bt) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) bt[kk * n + j] = b[j * ldb + kk];
}

// The three products below share one scheme: a 4 x (2 vectors) block of C is held in eight vector
// registers while k runs, so that each step loads 4 values of A and 2 vectors of B for 8 vector
// multiply-adds instead of re-reading and re-writing C; the ragged edges take a plain loop. The
// vectors are GCC/Clang vector extensions of 16 bytes (4 floats or 2 doubles), which compile to SSE2
// on any x86-64 and to NEON on ARM without intrinsics.
template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(16)));
  static constexpr int64_t width = int64_t(16 / sizeof(T));
  static type load(const T* p) {
    type v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(T* p, type v) { std::memcpy(p, &v, sizeof v); }
};

// C[m x n] (op)= alpha * sum_kk a(i, kk) * b(kk, j), where a(i, kk) = a[i * a_rs + kk * a_ks] and
// b(kk, j) = b[kk * ldb + j]; accumulate chooses C += over C =.
template <class T>
inline void gemm_generic(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_ks, const T* b,
                         int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  using V = typename Vec<T>::type;
  constexpr int64_t W = Vec<T>::width, NR = 2 * W;
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const T* a0 = a + i * a_rs;
    const T* a1 = a0 + a_rs;
    const T* a2 = a1 + a_rs;
    const T* a3 = a2 + a_rs;
    int64_t j = 0;
    for (; j + NR <= n; j += NR) {
      V c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {};
      const T* bk = b + j;
      for (int64_t kk = 0; kk < k; ++kk, bk += ldb) {
        const V b0 = Vec<T>::load(bk), b1 = Vec<T>::load(bk + W);
        const T x0 = a0[kk * a_ks], x1 = a1[kk * a_ks], x2 = a2[kk * a_ks], x3 = a3[kk * a_ks];
        c00 += x0 * b0;
        c01 += x0 * b1;
        c10 += x1 * b0;
        c11 += x1 * b1;
        c20 += x2 * b0;
        c21 += x2 * b1;
        c30 += x3 * b0;
        c31 += x3 * b1;
      }
      const V* acc[4][2] = {{&c00, &c01}, {&c10, &c11}, {&c20, &c21}, {&c30, &c31}};
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t h = 0; h < 2; ++h) {
          T* cp = c + (i + r) * ldc + j + h * W;
          V out = alpha * *acc[r][h];
          if (accumulate) out += Vec<T>::load(cp);
          Vec<T>::store(cp, out);
        }
    }
    for (; j < n; ++j)
      for (int64_t r = 0; r < 4; ++r) {
        T s = 0;
        for (int64_t kk = 0; kk < k; ++kk) s += a[(i + r) * a_rs + kk * a_ks] * b[kk * ldb + j];
        T* cp = c + (i + r) * ldc + j;
        *cp = accumulate ? *cp + alpha * s : alpha * s;
      }
  }
  for (; i < m; ++i) {
    T* ci = c + i * ldc;
    if (!accumulate)
      for (int64_t j = 0; j < n; ++j) ci[j] = T(0);
    for (int64_t kk = 0; kk < k; ++kk) {
      const T x = alpha * a[i * a_rs + kk * a_ks];
      const T* bk = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * bk[j];
    }
  }
}

// C[m x n] = alpha * A[m x k] * B[n x k]^T with B's rows contiguous (row stride ldb): dot products
// of A's rows with B's rows. For the few-row case (decoding: one query against every cached key)
// this reads B once where transposing it first would read it, write it and read it again; for
// many rows the transposed-tile product below reuses each B vector across four rows instead.
template <class T>
inline void gemm_a_bt_rows(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                           T* c, int64_t ldc) {
  using V = typename Vec<T>::type;
  constexpr int64_t W = Vec<T>::width;
  for (int64_t i = 0; i < m; ++i) {
    const T* ai = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      const T* bj = b + j * ldb;
      V s0 = {}, s1 = {};
      int64_t kk = 0;
      for (; kk + 2 * W <= k; kk += 2 * W) {
        s0 += Vec<T>::load(ai + kk) * Vec<T>::load(bj + kk);
        s1 += Vec<T>::load(ai + kk + W) * Vec<T>::load(bj + kk + W);
      }
      s0 += s1;
      T sum = 0;
      for (int64_t l = 0; l < W; ++l) sum += s0[l];
      for (; kk < k; ++kk) sum += ai[kk] * bj[kk];
      c[i * ldc + j] = alpha * sum;
    }
  }
}

// C[m x n] = alpha * A[m x k] * Bt[k x n]   (Bt is a transposed tile, row stride n)
template <class T>
inline void gemm_a_bt(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* bt, T* c,
                      int64_t ldc) {
  gemm_generic(m, n, k, alpha, a, lda, int64_t(1), bt, n, c, ldc, false);
}

// C[m x n] += alpha * A[m x k] * B[k x n]
template <class T>
inline void gemm_acc_ab(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                        T* c, int64_t ldc) {
  gemm_generic(m, n, k, alpha, a, lda, int64_t(1), b, ldb, c, ldc, true);
}

// C[m x n] += alpha * A[k x m]^T * B[k x n]
template <class T>
inline void gemm_acc_atb(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                         T* c, int64_t ldc) {
  gemm_generic(m, n, k, alpha, a, int64_t(1), lda, b, ldb, c, ldc, true);
}

// out[j] = exp(in[j] - shift) for j < n, for arguments <= 0 (scores minus a row max or a row
// log-sum-exp). std::exp is a scalar call that the compiler cannot vectorise, and both study
// algorithms evaluate N^2 of them. For float: exp(x) = 2^k e^r with k = round(x / ln 2), |r| <= ln 2 / 2, and
// e^r by its degree-6 Taylor polynomial (relative error about 2e-7, float's own rounding). Where
// float underflows (k < -126, x < -87.3) the result is 0; the rounding trick holds for x > -8e6.
// Written without float comparisons so that g++ vectorises it without -ffast-math.
// Double keeps std::exp: it is the reference precision of the tests.
template <class T>
inline void exp_shifted(const T* in, T* out, int64_t n, T shift) {
  for (int64_t j = 0; j < n; ++j) out[j] = std::exp(in[j] - shift);
}
template <>
inline void exp_shifted<float>(const float* in, float* out, int64_t n, float shift) {
  for (int64_t j = 0; j < n; ++j) {
    const float x = in[j] - shift;
    // Round x / ln2 to the nearest integer by adding and subtracting 1.5 * 2^23 (exact in float).
    const float kf = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = (x - kf * 0.693145751953125f) - kf * 1.42860682030941723e-6f;  // ln 2 split in two
    const float p =
        1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    const int32_t k = int32_t(kf);
    const int32_t bits = k >= -126 ? (k + 127) << 23 : 0;  // 2^k, or 0 below float's normal range
    float two_k;
    std::memcpy(&two_k, &bits, sizeof two_k);
    out[j] = p * two_k;
  }
}

}  // namespace ember::cpu::attn
