// The OpenBLAS peer, opened at run time (dlopen of libopenblas.so.0) the first time the 'blas'
// variant runs, so that Ember neither links OpenBLAS nor needs it installed: a benchmark finds it
// where the machine has it. cblas wants each operand with one unit stride; a strided view whose
// rows or columns are contiguous is passed as it is (transposed if need be), anything else is
// copied first, as a caller of BLAS would have to.
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu {

namespace {

// The CBLAS interface's constants (cblas.h) and OpenBLAS's default 32-bit integer.
using blasint = int;
enum CBLAS_ORDER { CblasRowMajor = 101 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

struct OpenBlas {
  void (*sgemm)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, float, const float*, blasint,
                const float*, blasint, float, float*, blasint) = nullptr;
  void (*dgemm)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, double, const double*,
                blasint, const double*, blasint, double, double*, blasint) = nullptr;
  char* (*get_config)() = nullptr;
  char* (*get_corename)() = nullptr;
  int (*get_num_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  std::string error;
  bool ok() const { return sgemm && dgemm && get_config && get_corename && get_num_threads && set_num_threads; }
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

const OpenBlas& openblas() {
  static OpenBlas b;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      const char* e = dlerror();
      b.error = str("OpenBLAS is not installed (", e ? e : "libopenblas.so.0 not found", "; Debian: apt-get install libopenblas0)");
      return;
    }
    bind(lib, b.sgemm, "cblas_sgemm");
    bind(lib, b.dgemm, "cblas_dgemm");
    bind(lib, b.get_config, "openblas_get_config");
    bind(lib, b.get_corename, "openblas_get_corename");
    bind(lib, b.get_num_threads, "openblas_get_num_threads");
    bind(lib, b.set_num_threads, "openblas_set_num_threads");
    if (!b.ok()) b.error = "the libopenblas found lacks cblas_sgemm/dgemm or openblas_get_corename";
  });
  return b;
}

const OpenBlas& require_openblas() {
  const OpenBlas& b = openblas();
  if (!b.ok()) throw Error(str("matmul: impl 'blas' needs OpenBLAS: ", b.error));
  return b;
}

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
  const OpenBlas& lib = require_openblas();
  std::vector<T> ca, cb;
  BlasOperand a = blas_operand(static_cast<const T*>(g.a), g.m, g.k, g.a_rs, g.a_cs, ca);
  BlasOperand b = blas_operand(static_cast<const T*>(g.b), g.k, g.n, g.b_rs, g.b_cs, cb);
  blasint ldc = blasint(std::max<int64_t>(g.c_rs, std::max<int64_t>(g.n, 1)));
  if constexpr (std::is_same_v<T, float>)
    lib.sgemm(CblasRowMajor, a.trans, b.trans, blasint(g.m), blasint(g.n), blasint(g.k), 1.0f,
                static_cast<const float*>(a.data), a.ld, static_cast<const float*>(b.data), b.ld, 0.0f,
                static_cast<float*>(g.c), ldc);
  else
    lib.dgemm(CblasRowMajor, a.trans, b.trans, blasint(g.m), blasint(g.n), blasint(g.k), 1.0,
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

bool blas_available() { return openblas().ok(); }

std::string blas_description() {
  const OpenBlas& b = openblas();
  if (!b.ok()) return "";
  return str(b.get_config(), " / kernel ", b.get_corename(), " / threads ", b.get_num_threads());
}

void blas_set_threads(int threads) {
  if (openblas().ok()) openblas().set_num_threads(threads);
}

}  // namespace ember::cpu
