// The OpenBLAS peer (only with EMBER_BLAS_PEER, defined by the root CMakeLists.txt when
// libopenblas is found). cblas wants each operand with one unit stride; a strided view whose
// rows or columns are contiguous is passed as it is (transposed if need be), anything else is
// copied first, as a caller of BLAS would have to.
#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>

#include "ops/matmul/cpu/kernels.h"

#ifdef EMBER_BLAS_PEER
#include <cblas.h>
#endif

namespace ember::cpu {

#ifdef EMBER_BLAS_PEER
namespace {

struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  blasint ld;
  const void* data;
};

// Describes a rows x cols operand with strides (rs, cs) to cblas, copying it into `copy` if neither
// its rows nor its columns are contiguous. Strides of a dim of size 1 do not matter.
template <class T>
BlasOperand blas_operand(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, std::vector<T>& copy) {
  int64_t r = rows == 1 ? std::max<int64_t>(cols, 1) : rs, c = cols == 1 ? 1 : cs;
  if (c == 1 && r >= std::max<int64_t>(cols, 1)) return {CblasNoTrans, blasint(r), p};
  r = rows == 1 ? 1 : rs;
  c = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
  if (r == 1 && c >= std::max<int64_t>(rows, 1)) return {CblasTrans, blasint(c), p};
  copy.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) copy[size_t(i * cols + j)] = p[i * rs + j * cs];
  return {CblasNoTrans, blasint(std::max<int64_t>(cols, 1)), copy.data()};
}

template <class T>
void blas(const GemmArgs& g) {
  std::vector<T> ca, cb;
  BlasOperand a = blas_operand(static_cast<const T*>(g.a), g.m, g.k, g.a_rs, g.a_cs, ca);
  BlasOperand b = blas_operand(static_cast<const T*>(g.b), g.k, g.n, g.b_rs, g.b_cs, cb);
  blasint ldc = blasint(std::max<int64_t>(g.c_rs, std::max<int64_t>(g.n, 1)));
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, blasint(g.m), blasint(g.n), blasint(g.k), 1.0f,
                static_cast<const float*>(a.data), a.ld, static_cast<const float*>(b.data), b.ld, 0.0f,
                static_cast<float*>(g.c), ldc);
  else
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, blasint(g.m), blasint(g.n), blasint(g.k), 1.0,
                static_cast<const double*>(a.data), a.ld, static_cast<const double*>(b.data), b.ld, 0.0,
                static_cast<double*>(g.c), ldc);
}

}  // namespace

void gemm_blas(const GemmArgs& g) {
  EMBER_CHECK(g.m < INT_MAX && g.n < INT_MAX && g.k < INT_MAX && g.c_rs < INT_MAX,
              "matmul: blas variant needs dimensions below 2^31, got m=", g.m, " n=", g.n, " k=", g.k);
  if (g.dtype == DType::Float32) blas<float>(g);
  else blas<double>(g);
}

bool blas_available() { return true; }

std::string blas_description() {
  return str(openblas_get_config(), " / kernel ", openblas_get_corename(), " / threads ", openblas_get_num_threads());
}

void blas_set_threads(int threads) { openblas_set_num_threads(threads); }

#else

void gemm_blas(const GemmArgs&) {
  throw Error("matmul: impl 'blas' needs Ember built with the OpenBLAS peer (EMBER_BLAS_PEER; install libopenblas-dev)");
}
bool blas_available() { return false; }
std::string blas_description() { return ""; }
void blas_set_threads(int) {}

#endif

}  // namespace ember::cpu
