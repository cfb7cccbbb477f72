// Timing one GPU matmul variant fairly, shared by bench_matmul_gpu (the GPU study's sweep) and the
// CUDA back-end of bench_matmul: CUDA events around each kernel alone (no host work inside), a
// warm-up, the L2 cache flushed before every timed run (by writing a buffer twice its size, as
// llm.c's dev/cuda benchmarks do), the median of the runs, fewer runs for slow points.
#pragma once
#include <algorithm>
#include <vector>

#include "framework/cuda/check.h"
#include "framework/cuda/cuda.h"
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
  double median_ms() const {
    std::vector<double> v = ms;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.empty() ? 0 : v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  }
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

// Times cuda::gemm(g, 1, impl, tile); the result stays in g.c.
template <class T>
GpuSamples time_gemm(const cuda::GemmView<T>& g, MatmulImpl impl, int tile, const GpuTiming& opt, const L2Flusher& l2) {
  auto run = [&] { cuda::gemm(g, 1, impl, tile); };
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

}  // namespace ember::gpu_bench
