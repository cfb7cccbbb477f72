// The small dense products both attention algorithms are built from, on row-major tiles.
// Standard and Flash call the same loops, so that timing differences between them come from
// the algorithms (what they store, how often they touch memory), not from different kernels.
// Every inner loop runs along a contiguous row with no reduction, so g++ vectorises it at -O2/-O3
// without -ffast-math (a dot-product loop would need reassociation).
#pragma once
#include <cstdint>

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

}  // namespace ember::cpu::attn
