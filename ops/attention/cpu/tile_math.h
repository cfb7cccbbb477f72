// The small dense products both attention algorithms are built from, on row-major tiles.
// Standard and Flash call the same loops, so that timing differences between them come from
// the algorithms (what they store, how often they touch memory), not from different kernels.
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

// C[m x n] = alpha * A[m x k] * Bt[k x n]   (Bt is a transposed tile, row stride n)
template <class T>
inline void gemm_a_bt(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* bt, T* c,
                      int64_t ldc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {  // four rows share each load of Bt
    T* c0 = c + i * ldc;
    T* c1 = c0 + ldc;
    T* c2 = c1 + ldc;
    T* c3 = c2 + ldc;
    for (int64_t j = 0; j < n; ++j) c0[j] = c1[j] = c2[j] = c3[j] = T(0);
    const T* a0 = a + i * lda;
    for (int64_t kk = 0; kk < k; ++kk) {
      T x0 = a0[kk], x1 = a0[lda + kk], x2 = a0[2 * lda + kk], x3 = a0[3 * lda + kk];
      const T* b = bt + kk * n;
      for (int64_t j = 0; j < n; ++j) {
        T bj = b[j];
        c0[j] += x0 * bj;
        c1[j] += x1 * bj;
        c2[j] += x2 * bj;
        c3[j] += x3 * bj;
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      c0[j] *= alpha;
      c1[j] *= alpha;
      c2[j] *= alpha;
      c3[j] *= alpha;
    }
  }
  for (; i < m; ++i) {
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = T(0);
    for (int64_t kk = 0; kk < k; ++kk) {
      T x = a[i * lda + kk];
      const T* b = bt + kk * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * b[j];
    }
    for (int64_t j = 0; j < n; ++j) ci[j] *= alpha;
  }
}

// C[m x n] += alpha * A[m x k] * B[k x n]
template <class T>
inline void gemm_acc_ab(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                        T* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    T* c0 = c + i * ldc;
    T* c1 = c0 + ldc;
    T* c2 = c1 + ldc;
    T* c3 = c2 + ldc;
    const T* a0 = a + i * lda;
    for (int64_t kk = 0; kk < k; ++kk) {
      T x0 = alpha * a0[kk], x1 = alpha * a0[lda + kk], x2 = alpha * a0[2 * lda + kk], x3 = alpha * a0[3 * lda + kk];
      const T* bk = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j) {
        T bj = bk[j];
        c0[j] += x0 * bj;
        c1[j] += x1 * bj;
        c2[j] += x2 * bj;
        c3[j] += x3 * bj;
      }
    }
  }
  for (; i < m; ++i) {
    T* ci = c + i * ldc;
    for (int64_t kk = 0; kk < k; ++kk) {
      T x = alpha * a[i * lda + kk];
      const T* bk = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * bk[j];
    }
  }
}

// C[m x n] += alpha * A[k x m]^T * B[k x n]
template <class T>
inline void gemm_acc_atb(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                         T* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    T* c0 = c + i * ldc;
    T* c1 = c0 + ldc;
    T* c2 = c1 + ldc;
    T* c3 = c2 + ldc;
    for (int64_t kk = 0; kk < k; ++kk) {
      const T* ak = a + kk * lda + i;
      T x0 = alpha * ak[0], x1 = alpha * ak[1], x2 = alpha * ak[2], x3 = alpha * ak[3];
      const T* bk = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j) {
        T bj = bk[j];
        c0[j] += x0 * bj;
        c1[j] += x1 * bj;
        c2[j] += x2 * bj;
        c3[j] += x3 * bj;
      }
    }
  }
  for (; i < m; ++i) {
    T* ci = c + i * ldc;
    for (int64_t kk = 0; kk < k; ++kk) {
      T x = alpha * a[kk * lda + i];
      const T* bk = b + kk * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * bk[j];
    }
  }
}

// out[j] = exp(in[j] - shift) for j < n, for arguments <= 0 (scores minus a row max or a row
// log-sum-exp). std::exp is a scalar call that the compiler cannot vectorise, and both algorithms
// evaluate N^2 of them. For float: exp(x) = 2^k e^r with k = round(x / ln 2), |r| <= ln 2 / 2, and
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
