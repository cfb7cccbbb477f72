// The SciPy peer: bench_sparse writes every matrix it measures to a small binary file, then runs
// scipy_peer.py on the same files in the same command (after Ember's runs, so the two never
// overlap), and reads back its timings and checksums. Identical inputs by construction; the
// checksums (sum of y, nonzeros and sum of C) confirm that both computed the same thing.
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
  // Writes the matrix (and x for an SpMV) and registers the case; `setup` asks for the timing
  // with dense -> CSR conversion too.
  void add(const std::string& id, const std::string& op, const ember::CsrTensor& a, const ember::Tensor& x, bool setup);
  // Runs the script, returns {id: {op_ms, setup_ms, sum | c_nnz, c_sum, ...}}, removes the files.
  json run(const std::string& python, const std::string& script, const Config& cfg, bool keep_files);
  bool empty() const { return cases_.empty(); }

 private:
  std::string dir_;
  json cases_ = json::array();
};

}  // namespace bench
