// MKL, the BLAS behind PyPI's torch.mm, as a matmul variant of bench_matmul ("mkl"), called in the
// same process as Ember's kernels so that both are timed in turns, in the same seconds.
//
// A VM's neighbours slow a core for tens of seconds at a time (NOTES.md: 55 to 79 GFLOP/s for one
// binary a minute apart), so a peer timed in another program, minutes later, can make a ratio
// read 0.6x or 1.2x for the same two kernels. PyPI's torch links MKL statically into
// libtorch_cpu.so and exports its Fortran BLAS (sgemm_, dgemm_) and MKL's service functions, so
// bench_matmul opens that library (it finds it by asking the peer's Python where torch lives) and
// calls MKL's sgemm directly: the kernel torch.mm runs for a float32 matrix product, without
// Python's few microseconds per call. Nothing here is linked into Ember.
#pragma once
#include <string>
#include <vector>

#include "ops/matmul/matmul.h"

namespace ember::matmul_bench {

struct MklPeer {
  std::string library;  // the file opened
  std::string version;  // MKL_Get_Version_String
  std::string error;    // why it is not usable ("" when it is)
  bool ok() const { return error.empty(); }
};

// Opens `library` (a libtorch_cpu.so or libmkl_rt.so exporting sgemm_, dgemm_, sgemv_, dgemv_,
// MKL_Set_Num_Threads_Local and MKL_Get_Version_String). Once one has opened, later calls return it
// whatever their argument; after a failure the next call tries its own. `preload`: libraries to
// open first (torch's CUDA runtime, which libtorch_cpu.so needs and which pip installs outside the
// loader's path).
const MklPeer& open_mkl(const std::string& library, const std::vector<std::string>& preload = {});

// Asks `python` where its torch keeps libtorch_cpu.so and which CUDA libraries it maps, then opens
// it as above. $EMBER_MKL_LIBRARY, when set, names the library instead.
const MklPeer& mkl_from_python(const std::string& python);

// C = A B through MKL's gemm (float32 or float64), with MKL on `threads` threads. Operands whose
// rows or columns are contiguous are passed as they are (transposed where need be), others copied.
// ember::Error when no MKL is open.
void mkl_gemm(const GemmArgs& g);
// C = A B for one row of A (m == 1) or one column of B (n == 1) through MKL's gemv, the call
// torch.mv makes. ember::Error for other shapes, or when no MKL is open.
void mkl_gemv(const GemmArgs& g);
void mkl_set_threads(int threads);

}  // namespace ember::matmul_bench
