// The CPU back-end of bench_matmul: every CPU variant registered with matmul (the library's packed
// kernel and OpenBLAS peer, the study's naive, ikj and blocked) on the same buffers, each
// validated on sampled entries before it is timed.
#include <cmath>
#include <cstdlib>
#include <map>

#include "ember.h"
#include "examples/common/progress_bar.h"
#include "examples/matmul/matmul_bench.h"
#include "framework/parallel.h"
#include "examples/matmul/study/study_kernels.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::matmul_bench {

namespace {

using Kernel = Matmul2dKernel;

// Every CPU variant registered with matmul (the library's, the study's, any other), timed as the
// 2-D kernel itself, and "auto", the library's own choice per shape.
std::map<std::string, Kernel> cpu_kernels() {
  matmul_study::register_matmul_study_kernels();
  std::map<std::string, Kernel> out{{"auto", matmul_cpu_kernel("")}};
  for (const std::string& v : matmul_variants(Device::CPU)) out[v] = matmul_cpu_kernel(v);
  return out;
}

int vector_bytes(cpu::CpuIsa isa) { return isa == cpu::CpuIsa::Avx512 ? 64 : isa == cpu::CpuIsa::Avx2 ? 32 : 16; }

int threads_of(const Config& cfg) { return cfg.threads > 0 ? cfg.threads : num_threads(); }

nlohmann::json describe_cpu(const Config& cfg) {
  bench::CpuInfo c = bench::cpu_info();
  cpu::CpuIsa isa = cpu::best_cpu_isa();
  int lanes = vector_bytes(isa) / int(itemsize(cfg.dtype));
  int threads = threads_of(cfg);
  // The peak needs the clock the cores really reach. A VM's /proc/cpuinfo "cpu MHz" is nominal and
  // a timed chain of adds is not a clock (it read 9.31 GHz on a 2-core VM: rename-stage tricks, and
  // a hypervisor's time slicing), so only cpufreq's cpuinfo_max_freq counts; most VMs have none.
  double ghz = bench::max_clock_ghz();
  double peak = ghz > 0 ? threads * ghz * lanes * 2 * cfg.fma_units : 0;
  nlohmann::json j = {{"cpu", c.model},
                      {"mhz_reported", c.mhz},
                      {"logical_cpus", c.logical_cpus},
                      {"threads", threads},
                      {"isa", cpu::name(isa)},
                      {"simd_lanes", lanes},
                      {"fma_units_per_core", cfg.fma_units},
                      {"peak_gflops", peak > 0 ? nlohmann::json(peak) : nlohmann::json(nullptr)},
                      {"peak", peak > 0 ? str(peak, " GFLOP/s = ", threads, " cores x ", ghz, " GHz (cpufreq max) x ", lanes,
                                              " lanes x 2 (FMA) x ", cfg.fma_units, " FMA units")
                                        : std::string("not known on this VM (no cpufreq cpuinfo_max_freq)")},
                      {"blas", cpu::blas_available() ? cpu::blas_description() : "OpenBLAS not installed"}};
  for (const char* var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = std::getenv(var)) j["env"][var] = v;
  return j;
}

template <class T>
std::vector<Result> run_typed(const Config& cfg) {
  int threads = threads_of(cfg);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  cpu::blas_set_threads(threads);
  std::map<std::string, Kernel> kernels = cpu_kernels();
  for (const std::string& v : cfg.variants) {
    std::string known;
    for (const auto& [name, kern] : kernels) known += (known.empty() ? "" : ", ") + name;
    EMBER_CHECK(kernels.count(v), "bench_matmul: unknown CPU variant '", v, "' (registered: ", known, ")");
  }
  std::vector<Result> out;
  ember::examples::ProgressBar progress("cpu", int(cfg.cases.size() * cfg.variants.size()), true, stderr, "runs");
  Generator gen(cfg.seed);
  for (const Case& s : cfg.cases) {
    Tensor a = normal({s.m, s.k}, 0, 1, dtype_of<T>::value, &gen), b = normal({s.k, s.n}, 0, 1, dtype_of<T>::value, &gen);
    Tensor c = empty({s.m, s.n}, dtype_of<T>::value);
    GemmArgs g{s.m, s.n, s.k, a.raw_data(), s.k, 1, b.raw_data(), s.n, 1, c.raw_data(), s.n, dtype_of<T>::value};
    for (const std::string& v : cfg.variants) {
      Result r{"cpu", v, s};
      if (v == "naive" && std::max({s.m, s.n, s.k}) > cfg.naive_max) {
        r.note = str("skipped: a dim > --naive-max ", cfg.naive_max);
      } else if (v == "blas" && !cpu::blas_available()) {
        r.note = "skipped: OpenBLAS is not installed";
      } else {
        const Kernel& kern = kernels.at(v);
        c.zero_();
        kern(g);
        r.max_rel_err = sampled_rel_err<T>(s, a.data<T>(), b.data<T>(), c.data<T>());
        double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
        if (!(r.max_rel_err <= tol)) {
          r.note = str("FAILED validation: relative error ", r.max_rel_err, " > ", tol);
        } else {
          if (cfg.wait_quiet_s > 0) r.idle_before = bench::wait_for_quiet(cfg.wait_quiet_s);
          r.timing = bench::measure([&] { kern(g); }, cfg.timing);
          r.gflops = s.flops() / r.timing.median_s * 1e-9;
        }
      }
      out.push_back(r);
      progress.step(s.label + " " + v);
    }
  }
  progress.finish();
  return out;
}

std::vector<Result> run_cpu(const Config& cfg) {
  return cfg.dtype == DType::Float32 ? run_typed<float>(cfg) : run_typed<double>(cfg);
}

}  // namespace

void register_cpu_matmul_bench(MatmulBenchRegistry& r) {
  r.push_back({"cpu", run_cpu, describe_cpu});
}

}  // namespace ember::matmul_bench
