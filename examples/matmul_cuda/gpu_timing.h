// Timing one GPU matmul variant fairly, shared by bench_matmul_gpu (the GPU study's sweep) and the
// CUDA back-end of bench_matmul: CUDA events around each kernel alone (no host work inside), a
// warm-up, the L2 cache flushed before every timed run (by writing a buffer twice its size, as
// llm.c's dev/cuda benchmarks do), the median of the runs, fewer runs for slow points.
#pragma once
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "examples/common/bench.h"
#include "examples/matmul_cuda/study/study_kernels.h"
#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "ops/matmul/cuda/gemm.h"

namespace ember::gpu_bench {

struct GpuTiming {
  int warmup = 2;
  int reps = 10;             // timed runs wanted
  int min_reps = 3;          // ... at least
  double max_seconds = 3.0;  // stop after min_reps once the next run would pass this
  bool flush_l2 = true;
};

struct GpuSamples {
  std::vector<double> ms;
  double median_ms() const { return bench::median(ms); }
  double min_ms() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
};

// A device buffer twice the L2's size; writing it evicts whatever the last run left in L2.
class L2Flusher {
 public:
  L2Flusher() : buf_(empty({std::max<int64_t>(2 * cuda::l2_cache_bytes() / 4, 1)}, DType::Float32, Device::CUDA)) {}
  void flush(int value) const {
    EMBER_CUDA_CHECK(cudaMemsetAsync(buf_.raw_data(), value & 0xff, size_t(buf_.numel()) * 4, nullptr));
  }

 private:
  Tensor buf_;
};

// Times run() (one kernel launch on the default stream).
template <class Run>
GpuSamples time_launch(Run&& run, const GpuTiming& opt, const L2Flusher& l2) {
  for (int w = 0; w < opt.warmup; ++w) run();
  cuda::Event start, stop;
  GpuSamples s;
  double spent = 0;
  while (int(s.ms.size()) < opt.reps) {
    if (opt.flush_l2) l2.flush(int(s.ms.size()));
    start.record();
    run();
    stop.record();
    stop.synchronize();
    double ms = stop.elapsed_ms(start);
    s.ms.push_back(ms);
    spent += ms / 1000;
    if (int(s.ms.size()) >= opt.min_reps && spent + ms / 1000 > opt.max_seconds) break;
  }
  return s;
}

// A GPU matmul variant as the benchmarks name it: a CUDA variant of matmul, with TILE for tiled
// (the study's kernels, registered by parse_gpu_variants, or cuBLAS).
struct GpuVariant {
  std::string label;  // "naive", "tiled(16)", "register_tiled_db", ...
  std::string impl;   // matmul's name of the kernel: "naive", "tiled", "register_tiled", "cublas", ...
  int tile = 16;

  template <class T>
  void run(const cuda::GemmView<T>& g) const {
    cuda::gemm(g, 1, impl, tile);
  }
  bool float32_only() const { return impl == "register_tiled" || impl == "register_tiled_db" || impl == "cublas_tf32"; }
};

// "naive,tiled,register_tiled,register_tiled_db,cublas,cublas_tf32" -> variants, "tiled" swept
// over `tiles`. Throws ember::Error for a name that is not a CUDA variant.
inline std::vector<GpuVariant> parse_gpu_variants(const std::vector<std::string>& names, const std::vector<int>& tiles) {
  matmul_cuda_study::register_matmul_cuda_study_kernels();
  std::vector<GpuVariant> out;
  for (const std::string& v : names) {
    if (v == "tiled")
      for (int t : tiles) out.push_back({str("tiled(", t, ")"), v, t});
    else if (v == "naive" || v == "register_tiled" || v == "register_tiled_db" || v == "cublas" || v == "cublas_tf32")
      out.push_back({v, v});
    else
      throw Error(str("'", v, "' is not a CUDA matmul variant (expected naive, tiled, register_tiled, ",
                      "register_tiled_db, cublas or cublas_tf32)"));
  }
  return out;
}

inline const char* kAllGpuVariants = "naive,tiled,register_tiled,register_tiled_db,cublas,cublas_tf32";

}  // namespace ember::gpu_bench
