// What bench_sparse measures and how: the configuration shared by the CPU, GPU and peer parts.
// Results are nlohmann::json rows with flat keys ("ember_ms_t2", "scipy_setup_ms", ...) so that
// the tables, the crossovers and the --json file all read the same records.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "framework/core/tensor.h"
#include "ops/sparse/csr.h"

namespace bench {

using json = nlohmann::json;

struct Config {
  int warmup = 1;
  int repeats = 5;
  std::vector<int> threads{1, 2};      // Ember's sparse kernels are timed at each
  int64_t max_dense_bytes = 256 << 20;  // dense comparisons only for matrices up to this size
  int64_t max_dense_gemm_n = 2048;      // Ember's dense GEMM costs n^3: measured up to this n
  double max_products = 5e8;            // SpGEMM cases with more multiply-adds are skipped
};

inline std::string key(const char* what, int threads) { return std::string(what) + "_t" + std::to_string(threads); }

// Stores a Timing under `name` (median ms) with its batch size, so the JSON shows both.
inline void put(json& row, const std::string& name, const Timing& t) {
  row[name + "_ms"] = t.median_ms;
  row[name + "_min_ms"] = t.min_ms;
  row[name + "_batch"] = t.batch;
}

// Model of an SpMV's compulsory memory traffic: values and column indices (4 + 4 bytes per
// nonzero), row pointers (4 per row), x read once and y written once (4 each per row).
inline double spmv_model_bytes(int64_t n, int64_t nnz) { return 8.0 * double(nnz) + 4.0 * double(n + 1) + 8.0 * double(n); }

}  // namespace bench
