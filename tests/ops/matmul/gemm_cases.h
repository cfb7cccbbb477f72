// Awkward matmul problems shared by the CUDA block-emulator tests and the GPU kernel tests: host
// operands laid out with the strides a case asks for, and a float64 reference per output.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/matmul/cuda_gemm_view.h"

namespace ember::testing {

enum class Layout {
  RowMajor,    // A and B row-major, contiguous
  TransposedA, // A column-major (a transposed view), B row-major
  TransposedB, // A row-major, B column-major
  Padded,      // both row-major with row strides larger than the row (slices of wider matrices)
};

struct GemmCase {
  int64_t m, k, n;
  int batch = 1;
  Layout layout = Layout::RowMajor;
  bool broadcast_b = false;  // B shared by every batch entry (batch stride 0)
  std::string name() const {
    static const char* names[] = {"row", "transA", "transB", "padded"};
    return std::to_string(batch) + "x" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + "_" +
           names[int(layout)] + (broadcast_b ? "_bcastB" : "");
  }
};

inline std::vector<GemmCase> awkward_gemm_cases() {
  return {{1, 1, 1},          {7, 5, 3},           {33, 17, 65},        {127, 33, 1},
          {1, 127, 33},       {64, 64, 64},        {130, 9, 131},       {33, 40, 36, 1, Layout::RowMajor},
          {17, 8, 12, 1, Layout::RowMajor},       {33, 17, 65, 1, Layout::TransposedA},
          {33, 17, 65, 1, Layout::TransposedB},   {31, 20, 45, 1, Layout::Padded},
          {9, 16, 7, 3, Layout::RowMajor},        {20, 12, 33, 2, Layout::RowMajor, true},
          {129, 24, 130, 2, Layout::Padded}};
}

// Host operands of a case, in T, with a float64 reference of C.
template <class T>
struct HostGemm {
  GemmCase cs;
  std::vector<T> a, b, c;
  std::vector<double> ref, absref;  // reference C and sum |a||b| per output (for the tolerance)
  cuda::GemmView<T> view;           // pointing into a, b, c (host memory)

  explicit HostGemm(const GemmCase& g, uint64_t seed = 7) : cs(g) {
    Generator gen(seed);
    int64_t m = g.m, k = g.k, n = g.n;
    int64_t pad = g.layout == Layout::Padded ? 5 : 0;
    cuda::GemmView<T>& v = view;
    v.m = m, v.k = k, v.n = n;
    // A: m x k per batch entry.
    if (g.layout == Layout::TransposedA) v.a_rs = 1, v.a_cs = m;
    else v.a_rs = k + pad, v.a_cs = 1;
    v.a_bs = (g.layout == Layout::TransposedA ? m * k : m * (k + pad));
    // B: k x n per batch entry.
    if (g.layout == Layout::TransposedB) v.b_rs = 1, v.b_cs = k;
    else v.b_rs = n + pad, v.b_cs = 1;
    int64_t b_entry = g.layout == Layout::TransposedB ? k * n : k * (n + pad);
    v.b_bs = g.broadcast_b ? 0 : b_entry;
    v.c_rs = n + pad;
    v.c_bs = m * (n + pad);
    a.resize(size_t(v.a_bs * g.batch));
    b.resize(size_t(g.broadcast_b ? b_entry : b_entry * g.batch));
    c.assign(size_t(v.c_bs * g.batch), T(-12345));  // a sentinel: every output must be written
    for (auto& x : a) x = T(gen.normal());
    for (auto& x : b) x = T(gen.normal());
    v.a = a.data(), v.b = b.data(), v.c = c.data();
    ref.assign(size_t(g.batch * m * n), 0.0);
    absref.assign(ref.size(), 0.0);
    for (int z = 0; z < g.batch; ++z)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0, sa = 0;
          for (int64_t p = 0; p < k; ++p) {
            double x = double(v.a_at(z, i, p)) * double(v.b_at(z, p, j));
            s += x;
            sa += std::abs(x);
          }
          ref[size_t((z * m + i) * n + j)] = s;
          absref[size_t((z * m + i) * n + j)] = sa;
        }
  }

  // Compares `out` (laid out like c) with the reference; the bound is the worst-case rounding of
  // a k-term sum in T, relative to sum |a||b|.
  // `eps` overrides the unit roundoff (e.g. TF32's 2^-11, whose inputs are rounded to 10 bits).
  ::testing::AssertionResult check(const std::vector<T>& out, double eps = 0) const {
    if (eps == 0) eps = sizeof(T) == 4 ? 6e-8 : 1.2e-16;
    for (int z = 0; z < cs.batch; ++z)
      for (int64_t i = 0; i < cs.m; ++i)
        for (int64_t j = 0; j < cs.n; ++j) {
          size_t r = size_t((z * cs.m + i) * cs.n + j);
          double got = double(out[size_t(z * view.c_bs + i * view.c_rs + j)]);
          double tol = 2.0 * double(cs.k + 1) * eps * absref[r] + 1e-30;
          if (!(std::abs(got - ref[r]) <= tol))
            return ::testing::AssertionFailure() << cs.name() << ": C[" << z << "][" << i << "][" << j << "] = " << got
                                                 << ", reference " << ref[r] << " (tolerance " << tol << ")";
        }
    // Nothing outside C may be written (the padding columns of a strided C keep their sentinel).
    for (int z = 0; z < cs.batch; ++z)
      for (int64_t i = 0; i < cs.m; ++i)
        for (int64_t j = cs.n; j < view.c_rs; ++j)
          if (out[size_t(z * view.c_bs + i * view.c_rs + j)] != T(-12345))
            return ::testing::AssertionFailure() << cs.name() << ": wrote outside C at [" << z << "][" << i << "][" << j << "]";
    return ::testing::AssertionSuccess();
  }
};

}  // namespace ember::testing
