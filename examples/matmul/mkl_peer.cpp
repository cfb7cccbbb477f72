#include "examples/matmul/mkl_peer.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <vector>

#include "examples/common/openblas_core.h"

namespace ember::matmul_bench {

namespace {

// The Fortran (column-major, LP64) BLAS interface that MKL exports.
template <class T>
using FortranGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*,
                             const int*, const T*, const int*, const T*, T*, const int*);
template <class T>
using FortranGemv = void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*,
                             const T*, T*, const int*);

struct Mkl {
  MklPeer peer;
  FortranGemm<float> sgemm = nullptr;
  FortranGemm<double> dgemm = nullptr;
  FortranGemv<float> sgemv = nullptr;
  FortranGemv<double> dgemv = nullptr;
  int (*set_num_threads)(int) = nullptr;  // MKL_Set_Num_Threads_Local: returns the previous setting
};

Mkl& state() {
  static Mkl m{{"", "", "no MKL opened yet (bench_matmul opens it when the variant 'mkl' is asked for)"}};
  return m;
}

void try_open(const std::string& library, const std::vector<std::string>& preload) {
  Mkl& m = state();
  m.peer.library = library;
  for (const std::string& p : preload) dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);  // a failure shows below
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    m.peer.error = str("cannot open ", library, ": ", e ? e : "unknown dlopen error");
    return;
  }
  m.sgemm = reinterpret_cast<FortranGemm<float>>(dlsym(lib, "sgemm_"));
  m.dgemm = reinterpret_cast<FortranGemm<double>>(dlsym(lib, "dgemm_"));
  m.sgemv = reinterpret_cast<FortranGemv<float>>(dlsym(lib, "sgemv_"));
  m.dgemv = reinterpret_cast<FortranGemv<double>>(dlsym(lib, "dgemv_"));
  m.set_num_threads = reinterpret_cast<int (*)(int)>(dlsym(lib, "MKL_Set_Num_Threads_Local"));
  auto version = reinterpret_cast<void (*)(char*, int)>(dlsym(lib, "MKL_Get_Version_String"));
  if (!m.sgemm || !m.dgemm || !m.sgemv || !m.dgemv || !m.set_num_threads || !version) {
    m.peer.error = str(library, " does not export MKL's sgemm_, dgemm_, sgemv_, dgemv_, MKL_Set_Num_Threads_Local and "
                       "MKL_Get_Version_String (expected PyPI's torch 2.x libtorch_cpu.so or libmkl_rt.so)");
    return;
  }
  char buf[256] = {};
  version(buf, int(sizeof buf) - 1);
  m.peer.version = buf;
  m.peer.error.clear();
}

// How MKL sees one row-major operand (rows x cols, strides rs, cs): column-major, so a row-major
// matrix is its own transpose with leading dimension rs ('N' in C^T = B^T A^T), and a matrix whose
// columns are contiguous is passed with 'T'. Anything else is copied (strides of size-1 dims do not
// matter).
template <class T>
struct Operand {
  char trans;
  int ld;
  const T* data;
};
template <class T>
Operand<T> operand(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, std::vector<T>& copy) {
  const int64_t r = rows == 1 ? std::max<int64_t>(cols, 1) : rs, c = cols == 1 ? 1 : cs;
  if (c == 1 && r >= std::max<int64_t>(cols, 1)) return {'N', int(r), p};
  const int64_t r2 = rows == 1 ? 1 : rs, c2 = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
  if (r2 == 1 && c2 >= std::max<int64_t>(rows, 1)) return {'T', int(c2), p};
  copy.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) copy[size_t(i * cols + j)] = p[i * rs + j * cs];
  return {'N', int(std::max<int64_t>(cols, 1)), copy.data()};
}

template <class T>
void gemm(const Mkl& m, const GemmArgs& g) {
  std::vector<T> ca, cb;
  Operand<T> a = operand(static_cast<const T*>(g.a), g.m, g.k, g.a_rs, g.a_cs, ca);
  Operand<T> b = operand(static_cast<const T*>(g.b), g.k, g.n, g.b_rs, g.b_cs, cb);
  const int M = int(g.n), N = int(g.m), K = int(g.k), ldc = int(std::max<int64_t>(g.c_rs, std::max<int64_t>(g.n, 1)));
  const T one = 1, zero = 0;
  FortranGemm<T> f;
  if constexpr (std::is_same_v<T, float>) f = m.sgemm;
  else f = m.dgemm;
  f(&b.trans, &a.trans, &M, &N, &K, &one, b.data, &b.ld, a.data, &a.ld, &zero, static_cast<T*>(g.c), &ldc);
}

// c = a B (m == 1) or c = A b (n == 1) through gemv, the call torch.mv makes: the matrix read in
// place when its rows or columns are contiguous, copied otherwise; the vectors with their strides.
template <class T>
void gemv(const Mkl& m, const GemmArgs& g) {
  const bool row = g.m == 1;
  // The matrix M (rows x cols, strides rs, cs): B for a row vector times B (y = M^T x), A for A
  // times a column vector (y = M x).
  const int64_t rows = row ? g.k : g.m, cols = row ? g.n : g.k;
  const int64_t rs = row ? g.b_rs : g.a_rs, cs = row ? g.b_cs : g.a_cs;
  const T* x = static_cast<const T*>(row ? g.a : g.b);
  const int incx = int(row ? g.a_cs : g.b_rs), incy = int(row ? 1 : g.c_rs);
  std::vector<T> copy;
  const Operand<T> op = operand(static_cast<const T*>(row ? g.b : g.a), rows, cols, rs, cs, copy);
  // 'N': the column-major view is M^T (cols x rows); 'T': it is M (rows x cols).
  const bool view_is_mt = op.trans == 'N';
  const char trans = view_is_mt == row ? 'N' : 'T';
  const int mf = int(view_is_mt ? cols : rows), nf = int(view_is_mt ? rows : cols);
  const T one = 1, zero = 0;
  FortranGemv<T> f;
  if constexpr (std::is_same_v<T, float>) f = m.sgemv;
  else f = m.dgemv;
  f(&trans, &mf, &nf, &one, op.data, &op.ld, x, &incx, &zero, static_cast<T*>(g.c), &incy);
}

}  // namespace

const MklPeer& open_mkl(const std::string& library, const std::vector<std::string>& preload) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!state().peer.ok()) try_open(library, preload);  // a failed attempt may be retried with another file
  return state().peer;
}

const MklPeer& mkl_from_python(const std::string& python) {
  static const MklPeer* found = nullptr;  // torch's import takes seconds: ask once per process
  if (found) return *found;
  if (const char* e = std::getenv("EMBER_MKL_LIBRARY"); e && *e) return *(found = &open_mkl(e));
  // torch's own import maps the CUDA runtime it was built against from pip's nvidia/ packages;
  // their paths, listed from /proc/self/maps, are opened first so libtorch_cpu.so's needs resolve.
  const std::string code =
      "import os, torch\n"
      "print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))\n"
      "seen = set()\n"
      "for line in open('/proc/self/maps'):\n"
      "    p = line.split()[-1]\n"
      "    if '/nvidia/' in p and '.so' in p and p not in seen:\n"
      "        seen.add(p); print(p)\n";
  int rc = 0;
  const std::string out = bench::openblas::run_capture("'" + python + "' -c \"" + code + "\" 2>/dev/null", &rc);
  std::istringstream lines(out);
  std::string library, line;
  std::vector<std::string> preload;
  std::getline(lines, library);
  while (std::getline(lines, line)) preload.push_back(line);
  if (rc != 0 || library.empty()) {
    static const MklPeer missing{"", "",
                                 str("no torch in ", python, " (its MKL is the peer; ./run.sh bench-deps installs it)")};
    return *(found = &missing);
  }
  return *(found = &open_mkl(library, preload));
}

void mkl_gemm(const GemmArgs& g) {
  const Mkl& m = state();
  EMBER_CHECK(m.peer.ok(), "matmul: variant 'mkl' needs MKL: ", m.peer.error);
  EMBER_CHECK(g.m < INT_MAX && g.n < INT_MAX && g.k < INT_MAX && g.c_rs < INT_MAX,
              "matmul: variant 'mkl' needs dimensions below 2^31, got m=", g.m, " n=", g.n, " k=", g.k);
  if (g.m == 0 || g.n == 0) return;
  if (g.dtype == DType::Float32) gemm<float>(m, g);
  else gemm<double>(m, g);
}

void mkl_gemv(const GemmArgs& g) {
  const Mkl& m = state();
  EMBER_CHECK(m.peer.ok(), "mkl_gemv needs MKL: ", m.peer.error);
  EMBER_CHECK(g.m == 1 || g.n == 1, "mkl_gemv: expected one row of A or one column of B, got m=", g.m, " n=", g.n);
  EMBER_CHECK(g.m < INT_MAX && g.n < INT_MAX && g.k < INT_MAX && g.c_rs < INT_MAX && g.a_cs < INT_MAX &&
                  g.b_rs < INT_MAX,
              "mkl_gemv needs dimensions and strides below 2^31, got m=", g.m, " n=", g.n, " k=", g.k);
  if (g.m == 0 || g.n == 0) return;
  if (g.dtype == DType::Float32) gemv<float>(m, g);
  else gemv<double>(m, g);
}

void mkl_set_threads(int threads) {
  if (state().peer.ok()) state().set_num_threads(std::max(1, threads));
}

}  // namespace ember::matmul_bench
