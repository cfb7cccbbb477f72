// The SciPy peer: bench_sparse writes each matrix it measures to a small binary file and runs
// scipy_peer.py on it right after Ember's timings of the same case (so both see the same machine
// conditions, and never overlap), then reads back its timings and checksums. Identical inputs by
// construction; the checksums (sum of y, nonzeros and sum of C) confirm the same results. The peer
// also times NumPy's dense product (OpenBLAS) on the same matrix, a tuned dense baseline.
//
// File layout (little-endian): "EMSP", int32 version = 1, int64 rows, cols, nnz, has_x; then
// int32 row_ptr[rows + 1], int32 col_idx[nnz], float32 values[nnz], float32 x[cols] if has_x.
#pragma once
#include <string>

#include "cases.h"

namespace bench {

class PeerCases {
 public:
  explicit PeerCases(std::string dir);
  // Writes the matrix (and x for an SpMV), runs the peer on it and returns its results:
  // {op_ms, op_min_ms, setup_ms, dense_ms, sum | c_nnz, c_sum, ...}. `setup` asks for the timing
  // with dense -> CSR conversion, `dense` for NumPy's dense product. Removes the file afterwards.
  json run_case(const std::string& id, const std::string& op, const ember::CsrTensor& a, const ember::Tensor& x,
                bool setup, bool dense);

  std::string python, script;
  int blas_threads = 1;  // OpenBLAS threads for NumPy's dense product (Ember's thread count)
  Config cfg;
  bool keep_files = false;
  std::string version_info;  // "SciPy x (NumPy y, Python z)" after the first case

 private:
  std::string dir_;
};

// The peer python: examples/common/peer_python.h's choice (the bench-deps venv, else /usr/bin/python3).
std::string peer_python();

}  // namespace bench
