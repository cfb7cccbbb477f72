// The CUDA back-end of bench_matmul (`bench_matmul --device cuda`): every CUDA matmul variant on
// the harness's cases, validated on sampled entries against float64 before it is timed, timed with
// CUDA events and the L2 flushed between runs (examples/matmul_cuda/gpu_timing.h). "tiled" sweeps
// TILE = 4, 8, 16, 32; "register_tiled_db" is the double-buffered register-tiled kernel; each
// result's note gives its percentage of cuBLAS (FP32) on the same case.
// examples/matmul/CMakeLists.txt compiles this file into bench_matmul in CUDA builds.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ember.h"
#include "examples/common/progress_bar.h"
#include "examples/matmul/matmul_bench.h"
#include "examples/matmul_cuda/gpu_timing.h"

namespace ember::matmul_bench {
namespace {

using gpu_bench::GpuVariant;

template <class T>
std::vector<Result> run_typed(const Config& cfg) {
  EMBER_CHECK(cuda_available(), "bench_matmul --device cuda: no GPU usable here (", cuda::unavailable_reason(), ")");
  std::vector<std::string> names = cfg.variants;
  if (names.empty()) {
    std::string all = gpu_bench::kAllGpuVariants;
    for (size_t pos = 0, e; pos < all.size(); pos = e + 1) {
      e = all.find(',', pos);
      if (e == std::string::npos) e = all.size();
      names.push_back(all.substr(pos, e - pos));
    }
  }
  std::vector<GpuVariant> variants = gpu_bench::parse_gpu_variants(names, {4, 8, 16, 32});
  gpu_bench::GpuTiming timing;
  timing.warmup = cfg.timing.warmup, timing.reps = cfg.timing.repeats, timing.min_reps = cfg.timing.min_repeats;
  timing.max_seconds = cfg.timing.max_seconds;
  gpu_bench::L2Flusher flusher;
  DType dt = dtype_of<T>::value;
  std::vector<Result> out;
  ember::examples::ProgressBar progress("cuda", int(cfg.cases.size() * variants.size()), true, stderr, "runs");
  Generator gen(cfg.seed);
  for (const Case& s : cfg.cases) {
    Tensor a = normal({s.m, s.k}, 0, 1, dt, &gen), b = normal({s.k, s.n}, 0, 1, dt, &gen);  // host copies validate
    Tensor da = a.to(Device::CUDA), db = b.to(Device::CUDA), dc = empty({s.m, s.n}, dt, Device::CUDA);
    cuda::GemmView<T> g;
    g.m = s.m, g.n = s.n, g.k = s.k;
    g.a = da.data<T>(), g.a_rs = s.k, g.a_cs = 1;
    g.b = db.data<T>(), g.b_rs = s.n, g.b_cs = 1;
    g.c = dc.data<T>(), g.c_rs = s.n;
    size_t first = out.size();
    double cublas_gflops = 0;
    for (const GpuVariant& v : variants) {
      Result r{"cuda", v.label, s};
      if (v.float32_only() && dt != DType::Float32) {
        r.note = "skipped: float32 only";
      } else {
        EMBER_CUDA_CHECK(cudaMemset(dc.raw_data(), 0xff, size_t(s.m * s.n) * sizeof(T)));  // NaN where unwritten
        v.run(g);
        Tensor c = dc.to(Device::CPU);
        r.max_rel_err = sampled_rel_err<T>(s, a.data<T>(), b.data<T>(), c.data<T>());
        // TF32 rounds the inputs to a 10-bit mantissa; FP32 variants differ only in summation order.
        double tol = v.impl == "cublas_tf32" ? 1e-2 : std::is_same_v<T, float> ? 1e-4 : 1e-12;
        if (!(r.max_rel_err <= tol)) {
          r.note = str("FAILED validation: relative error ", r.max_rel_err, " > ", tol);
        } else {
          gpu_bench::GpuSamples t = gpu_bench::time_launch([&] { v.run(g); }, timing, flusher);
          r.timing.samples_s.clear();
          for (double ms : t.ms) r.timing.samples_s.push_back(ms / 1000);
          r.timing.median_s = t.median_ms() / 1000;
          r.timing.min_s = t.min_ms() / 1000;
          r.timing.max_s = *std::max_element(t.ms.begin(), t.ms.end()) / 1000;
          r.timing.repeats = int(t.ms.size());
          r.gflops = s.flops() / r.timing.median_s * 1e-9;
          if (v.impl == "cublas") cublas_gflops = r.gflops;
        }
      }
      out.push_back(r);
      progress.step(s.label + " " + v.label);
    }
    if (cublas_gflops > 0)
      for (size_t i = first; i < out.size(); ++i)
        if (out[i].gflops > 0 && out[i].note.empty())
          out[i].note = str(std::round(1000.0 * out[i].gflops / cublas_gflops) / 10, "% of cuBLAS");
  }
  progress.finish();
  return out;
}

std::vector<Result> run_cuda(const Config& cfg) {
  return cfg.dtype == DType::Float32 ? run_typed<float>(cfg) : run_typed<double>(cfg);
}

nlohmann::json describe_cuda(const Config&) {
  if (!cuda_available()) return {{"gpu", "none"}, {"reason", cuda::unavailable_reason()}};
  return {{"gpu", cuda::device_name()},
          {"l2_bytes", cuda::l2_cache_bytes()},
          {"timing", "CUDA events around each kernel, L2 flushed before every timed run"}};
}

}  // namespace

void register_cuda_matmul_bench(MatmulBenchRegistry& r) { r.push_back({"cuda", run_cuda, describe_cuda}); }

}  // namespace ember::matmul_bench
