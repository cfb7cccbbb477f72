// bench_matmul_gpu: the GPU matmul study's sweep. Times every CUDA variant (naive, tiled for each TILE,
// register-tiled, cuBLAS, cuBLAS with TF32) on n x n float32 products, with CUDA events around
// each kernel, after a warm-up, with the L2 cache flushed before every timed run; reports the
// median, GFLOP/s and the percentage of cuBLAS (FP32) at the same n. Every variant's result is
// checked against cuBLAS in every run; a wrong result fails the program.
//
//   bench_matmul_gpu [--sizes 256,1024] [--variants naive,tiled] [--tiles 8,16] [--json out.json]
// (bench_matmul --device cuda runs the same variants through the shared matmul harness.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "ember.h"
#include "examples/common/bench.h"
#include "examples/common/progress_bar.h"
#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "examples/matmul_cuda/gpu_flags.h"
#include "examples/matmul_cuda/gpu_timing.h"
#include "ops/matmul/cuda/gemm.h"

using namespace ember;

namespace {

using gpu_bench::GpuVariant;

struct Result {
  int64_t n;
  GpuVariant v;
  double ms_median = 0, ms_min = 0;
  int reps = 0;
  double gflops = 0, pct_cublas = 0, max_rel_err = 0;
  bool ok = true;
};

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_matmul_gpu",
                           "GPU matmul study: naive, shared-memory tiled (TILE sweep), register-tiled, cuBLAS and "
                           "cuBLAS-TF32 on n x n float32 matrices; GFLOP/s and % of cuBLAS, CUDA-event timing.");
  gpu_bench::add_gpu_flags(options, gpu_bench::kAllGpuVariants);
  cxxopts::ParseResult args;
  gpu_bench::GpuFlags flags;
  std::vector<GpuVariant> variants;
  try {
    args = cli::parse(options, argc, argv);
    if (!args.count("help")) {  // every flag before the GPU is touched
      flags = gpu_bench::read_gpu_flags(args);
      variants = gpu_bench::parse_gpu_variants(flags.variants, flags.tiles);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_matmul_gpu: " << e.what() << "\n" << options.help() << "\n";
    return 2;
  }
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  try {
    if (!cuda_available()) {
      std::cerr << "bench_matmul_gpu: no GPU usable here (" << cuda::unavailable_reason() << "); nothing measured\n";
      return 3;
    }
    const std::vector<int64_t>& sizes = flags.sizes;
    const int warmup = flags.warmup, reps = flags.reps;
    const double max_seconds = flags.max_seconds;
    const bool flush = flags.flush;
    const uint64_t seed = flags.seed;

    std::string gpu = cuda::device_name();
    int64_t l2 = cuda::l2_cache_bytes();
    gpu_bench::L2Flusher flusher;
    gpu_bench::GpuTiming timing;
    timing.warmup = warmup, timing.reps = reps, timing.min_reps = std::min(3, reps), timing.max_seconds = max_seconds;
    timing.flush_l2 = flush;
    std::cout << "GPU: " << gpu << " (L2 " << l2 / (1 << 20) << " MiB); float32, C = A B, n x n; median of up to "
              << reps << " runs after " << warmup << " warm-up" << (flush ? ", L2 flushed before each run" : "") << "\n\n";

    std::vector<Result> results;
    size_t total = sizes.size() * variants.size(), done = 0;
    examples::ProgressBar progress("gpu", int64_t(total), true, stderr, "runs");
    bool all_ok = true;
    for (int64_t n : sizes) {
      Tensor a = cuda::randn({n, n}, DType::Float32, seed), b = cuda::randn({n, n}, DType::Float32, seed + 1);
      Tensor c = empty({n, n}, DType::Float32, Device::CUDA), ref = empty({n, n}, DType::Float32, Device::CUDA);
      cuda::GemmView<float> g;
      g.m = g.n = g.k = n;
      g.a = a.data<float>(), g.a_rs = n, g.a_cs = 1;
      g.b = b.data<float>(), g.b_rs = n, g.b_cs = 1;
      g.c_rs = n;
      g.c = ref.data<float>();
      cuda::gemm(g, 1, "cublas");  // the reference every variant is checked against
      double ref_scale = max(abs(ref)).to(Device::CPU).item();
      double cublas_gflops = 0;
      for (const GpuVariant& v : variants) {
        progress.update(int64_t(done), int64_t(done), str("n=", n, " ", v.label));
        g.c = c.data<float>();
        EMBER_CUDA_CHECK(cudaMemset(c.data<float>(), 0xff, size_t(n * n) * 4));  // NaN: unwritten outputs fail the check
        gpu_bench::GpuSamples times = gpu_bench::time_launch([&] { v.run(g); }, timing, flusher);
        Result res{n, v};
        res.ms_median = times.median_ms();
        res.ms_min = times.min_ms();
        res.reps = int(times.ms.size());
        res.gflops = 2.0 * double(n) * double(n) * double(n) / (res.ms_median * 1e6);
        double err = max(abs(c - ref)).to(Device::CPU).item();
        res.max_rel_err = err / std::max(ref_scale, 1e-30);
        // FP32 variants differ from cuBLAS only by summation order; TF32 rounds inputs to 10 bits.
        double bound = v.impl == "cublas_tf32" ? 1e-2 : 1e-4;
        res.ok = std::isfinite(res.max_rel_err) && res.max_rel_err <= bound;
        all_ok = all_ok && res.ok;
        if (v.impl == "cublas") cublas_gflops = res.gflops;
        results.push_back(res);
        ++done;
        progress.update(int64_t(done), int64_t(done), str("n=", n, " ", v.label));
      }
      // Percentages against cuBLAS (FP32) at this n, measured in the same run.
      if (cublas_gflops > 0)
        for (Result& r : results)
          if (r.n == n) r.pct_cublas = 100.0 * r.gflops / cublas_gflops;
    }
    progress.finish();

    std::printf("%6s  %-14s %10s %10s %9s %10s %4s  %s\n", "n", "variant", "ms", "GFLOP/s", "% cuBLAS", "rel.err", "reps",
                "check");
    for (const Result& r : results) {
      std::string pct = r.pct_cublas > 0 ? str(std::round(r.pct_cublas * 10) / 10) : "-";
      std::printf("%6lld  %-14s %10.3f %10.1f %9s %10.2e %4d  %s\n", (long long)r.n, r.v.label.c_str(), r.ms_median,
                  r.gflops, pct.c_str(), r.max_rel_err, r.reps, r.ok ? "ok" : "WRONG");
    }

    if (args.count("json")) {
      nlohmann::json j;
      j["program"] = "bench_matmul_gpu";
      j["gpu"] = gpu;
      j["l2_bytes"] = l2;
      j["dtype"] = "float32";
      j["settings"] = {{"warmup", warmup}, {"reps", reps}, {"max_seconds", max_seconds}, {"l2_flush", flush}, {"seed", seed}};
      for (const Result& r : results)
        j["results"].push_back({{"n", r.n},
                                {"variant", r.v.impl},
                                {"tile", r.v.tile},
                                {"label", r.v.label},
                                {"ms_median", r.ms_median},
                                {"ms_min", r.ms_min},
                                {"reps", r.reps},
                                {"gflops", r.gflops},
                                {"pct_cublas", r.pct_cublas},
                                {"max_rel_err_vs_cublas", r.max_rel_err},
                                {"ok", r.ok}});
      bench::write_json(args["json"].as<std::string>(), j);
    }
    if (!all_ok) {
      std::cerr << "bench_matmul_gpu: a variant disagreed with cuBLAS (see the check column)\n";
      return 1;
    }
  } catch (const Error& e) {
    std::cerr << "bench_matmul_gpu: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
