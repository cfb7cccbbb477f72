// What bench_matmul measures, shared by its device back-ends: the products (cases), the options,
// one result row, and the table of back-ends by device. The CPU back-end is bench_matmul_cpu.cpp;
// a CUDA back-end adds itself in a file bench_matmul_cuda*.cpp (or .cu) that defines
//   void register_cuda_matmul_bench(MatmulBenchRegistry& r) { r.push_back({"cuda", run, describe}); }
// CMakeLists.txt compiles such a file into bench_matmul in CUDA builds and defines
// EMBER_MATMUL_CUDA_BENCH, so main() calls it. Results use the same struct, table and JSON.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "examples/common/bench.h"
#include "framework/core/dtype.h"

namespace ember::matmul_bench {

struct Case {
  int64_t m, k, n;
  std::string label;  // "n=1024" or "gpt2 qkv (64x768 @ 768x2304)"
  // B given as the transpose of an n x k row-major matrix (a Linear weight, GPT-2's tied LM head
  // wte^T) instead of a row-major k x n one; CPU only.
  bool b_transposed = false;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Element B[p, j] of the case's B, stored at b.
  template <class T>
  T b_at(const T* b, int64_t p, int64_t j) const {
    return b_transposed ? b[j * k + p] : b[p * n + j];
  }
};

struct Config {
  std::vector<Case> cases;
  std::vector<std::string> variants;  // CPU: registered matmul variants and "auto"; CUDA: gpu_timing.h's
  DType dtype = DType::Float32;
  bench::Options timing;
  int threads = 0;          // CPU threads for Ember and for OpenBLAS (0: all)
  int64_t naive_max = 512;  // the naive variant skips larger products (minutes per run)
  int fma_units = 2;        // FMA pipes per core, for the theoretical peak (2 on Zen 4/5, Skylake-SP)
  uint64_t seed = 1;
  double wait_quiet_s = 0;  // before each measurement, wait up to this long for idle CPUs
  std::string python;       // the peer's Python, whose torch provides the "mkl" variant (mkl_peer.h)
  // CPU: the operands copied to 4 KiB pages (as a NumPy array, or a tensor of PyTorch's default
  // allocator, lies) instead of Ember's tensors (huge pages from 2 MiB on, where Linux gives them).
  bool small_pages = false;
};

struct Result {
  std::string device, variant;
  Case shape;
  double gflops = 0;
  bench::Timing timing;
  double max_rel_err = 0;  // of the validation before timing: max |c - ref| / sum |a||b|
  std::string note;        // e.g. "skipped: n > naive_max"
  double idle_before = -1;  // idle fraction of the CPUs just before timing (-1: not checked)
  // For a peer timed in turns with "packed": how many times faster packed ran, the median of the
  // per-round ratios (bench::paired_speedup); 0 where they were not timed in turns.
  double packed_speedup_in_turns = 0;
};

using DeviceRunner = std::function<std::vector<Result>(const Config&)>;
struct DeviceBench {
  std::string device;
  DeviceRunner run;
  std::function<nlohmann::json(const Config&)> describe;  // the machine: model, peak, peers' kernels
};
using MatmulBenchRegistry = std::vector<DeviceBench>;

void register_cpu_matmul_bench(MatmulBenchRegistry& r);  // bench_matmul_cpu.cpp
#ifdef EMBER_MATMUL_CUDA_BENCH
void register_cuda_matmul_bench(MatmulBenchRegistry& r);  // bench_matmul_cuda*.cpp / .cu
#endif

// Validation shared by the back-ends: the largest error of `c` (row-major m x n) over a sample
// of entries recomputed in float64 from a (row-major) and b (as the case stores it), relative to
// sum_p |a_ip b_pj|.
template <class T>
double sampled_rel_err(const Case& s, const T* a, const T* b, const T* c, int samples = 256) {
  double worst = 0;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < samples; ++t) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    int64_t i = int64_t((state >> 33) % uint64_t(s.m)), j = int64_t((state >> 13) % uint64_t(s.n));
    double ref = 0, scale = 0;
    for (int64_t p = 0; p < s.k; ++p) {
      double x = double(a[i * s.k + p]) * double(s.b_at(b, p, j));
      ref += x;
      scale += x < 0 ? -x : x;
    }
    double err = double(c[i * s.n + j]) - ref;
    err = (err < 0 ? -err : err) / (scale > 0 ? scale : 1.0);
    if (err != err) return err;  // NaN: fails every comparison, so the caller rejects it
    worst = err > worst ? err : worst;
  }
  return worst;
}

}  // namespace ember::matmul_bench
