// The CPU back-end of bench_matmul: every CPU variant registered with matmul (the library's packed
// kernel and OpenBLAS peer, the study's naive, ikj and blocked) on the same buffers, each
// validated on sampled entries before it is timed.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <chrono>
#include <map>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ember.h"
#include "examples/common/progress_bar.h"
#include "examples/matmul/matmul_bench.h"
#include "examples/matmul/mkl_peer.h"
#include "framework/core/parallel.h"
#include "examples/matmul/study/study_kernels.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::matmul_bench {

namespace {

using Kernel = Matmul2dKernel;

// Every CPU variant registered with matmul (the library's, the study's, any other), timed as the
// 2-D kernel itself, and "auto", the library's own choice per shape. "mkl", when asked for, is
// registered here first from the peer's torch (mkl_peer.h); `mkl_note` says why it could not be.
std::map<std::string, Kernel> cpu_kernels(const Config& cfg, std::string* mkl_note) {
  matmul_study::register_matmul_study_kernels();
  if (std::count(cfg.variants.begin(), cfg.variants.end(), "mkl")) {
    const MklPeer& mkl = mkl_from_python(cfg.python);
    static bool registered = false;
    if (mkl.ok() && !registered) register_matmul_variant("mkl", mkl_gemm), registered = true;
    if (!mkl.ok()) *mkl_note = "skipped: " + mkl.error;
  }
  std::map<std::string, Kernel> out{{"auto", matmul_cpu_kernel("")}};
  for (const std::string& v : matmul_variants(Device::CPU)) out[v] = matmul_cpu_kernel(v);
  return out;
}

// How long OpenBLAS's idle threads spin before they sleep: its THREAD_TIMEOUT, 2^28 cycles, is
// about 0.1 s at 2-3 GHz.
constexpr int kOpenBlasSpinMs = 300;
// ... and OpenMP's (libgomp's default GOMP_SPINCOUNT, a few milliseconds), before OpenBLAS's turn.
constexpr int kOpenMpSpinMs = 50;

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
                      {"blas", cpu::blas_available() ? cpu::blas_description() : "OpenBLAS not installed"},
                      {"pages", cfg.small_pages ? "4 KiB (copies of the operands, MADV_NOHUGEPAGE; --pages 4k)"
                                                : "Ember's tensors (huge pages from 2 MiB on, where Linux gives them)"}};
  if (std::count(cfg.variants.begin(), cfg.variants.end(), "mkl")) {
    const MklPeer& mkl = mkl_from_python(cfg.python);
    j["mkl"] = mkl.ok() ? nlohmann::json{{"library", mkl.library}, {"version", mkl.version}, {"threads", threads}}
                        : nlohmann::json{{"error", mkl.error}};
  }
  for (const char* var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = std::getenv(var)) j["env"][var] = v;
  return j;
}

// `bytes` of memory on 4 KiB pages (MADV_NOHUGEPAGE), holding a copy of src where it is given:
// where a NumPy array or a tensor of PyTorch's default allocator lies, unlike Ember's tensors of
// 2 MiB or more (framework/core/storage.h). Rows a multiple of 4 KiB apart then meet in the L2's sets
// where the OS put their pages (ops/matmul/cpu/cache_model.cpp, rows_fit_l2).
std::shared_ptr<void> on_small_pages(const void* src, size_t bytes) {
  const size_t whole = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, whole);
  EMBER_CHECK(p != nullptr, "bench_matmul: cannot allocate ", whole, " bytes on 4 KiB pages");
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
  madvise(p, whole, MADV_NOHUGEPAGE);  // where THP is "always", it would otherwise give huge pages
#endif
  if (src) std::memcpy(p, src, bytes);
  return std::shared_ptr<void>(p, std::free);
}

template <class T>
std::vector<Result> run_typed(const Config& cfg) {
  int threads = threads_of(cfg);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  cpu::blas_set_threads(threads);
  std::string mkl_note;
  std::map<std::string, Kernel> kernels = cpu_kernels(cfg, &mkl_note);
  mkl_set_threads(threads);
  for (const std::string& v : cfg.variants) {
    std::string known;
    for (const auto& [name, kern] : kernels) known += (known.empty() ? "" : ", ") + name;
    EMBER_CHECK(kernels.count(v) || (v == "mkl" && !mkl_note.empty()), "bench_matmul: unknown CPU variant '", v,
                "' (registered: ", known, ", and mkl from the peer's torch)");
  }
  std::vector<Result> out;
  ember::examples::ProgressBar progress("cpu", int(cfg.cases.size()), true, stderr, "shapes");
  Generator gen(cfg.seed);
  for (const Case& s : cfg.cases) {
    Tensor a = normal({s.m, s.k}, 0, 1, dtype_of<T>::value, &gen);
    Tensor b = normal(s.b_transposed ? Shape{s.n, s.k} : Shape{s.k, s.n}, 0, 1, dtype_of<T>::value, &gen);
    const int64_t b_rs = s.b_transposed ? 1 : s.n, b_cs = s.b_transposed ? s.k : 1;
    // The operands every variant reads (and, per variant, writes): the tensors' own memory, or
    // copies of it on 4 KiB pages (--pages 4k).
    std::vector<std::shared_ptr<void>> small;
    auto place = [&](const Tensor& t) -> void* {
      if (!cfg.small_pages) return t.raw_data();
      small.push_back(on_small_pages(t.raw_data(), size_t(t.numel()) * sizeof(T)));
      return small.back().get();
    };
    const T* a_at = static_cast<const T*>(place(a));
    const T* b_at = static_cast<const T*>(place(b));
    // One output per variant, so that each is validated on its own result and none writes the
    // buffer another is checked on.
    std::vector<Result> rs;
    std::vector<Tensor> cs;
    // Validates variant v; returns the call to time, or nothing (rs.back().note says why).
    auto prepare = [&](const std::string& v) -> std::function<void()> {
      rs.push_back(Result{"cpu", v, s});
      Result& r = rs.back();
      cs.push_back(empty({s.m, s.n}, dtype_of<T>::value));
      Tensor& c = cs.back();
      if (v == "naive" && std::max({s.m, s.n, s.k}) > cfg.naive_max) {
        r.note = str("skipped: a dim > --naive-max ", cfg.naive_max);
      } else if (v == "blas" && !cpu::blas_available()) {
        r.note = "skipped: OpenBLAS is not installed";
      } else if (v == "mkl" && !mkl_note.empty()) {
        r.note = mkl_note;
      } else {
        const Kernel& kern = kernels.at(v);
        c.zero_();
        T* c_at = static_cast<T*>(place(c));
        GemmArgs g{s.m, s.n, s.k, a_at, s.k, 1, b_at, b_rs, b_cs, c_at, s.n, dtype_of<T>::value};
        kern(g);
        r.max_rel_err = sampled_rel_err<T>(s, a_at, b_at, c_at);
        double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
        if (r.max_rel_err <= tol) return [kern, g] { kern(g); };
        r.note = str("FAILED validation: relative error ", r.max_rel_err, " > ", tol);
      }
      return {};
    };
    auto record = [&](size_t i, const bench::Timing& t, double idle) {
      rs[i].timing = t;
      rs[i].idle_before = idle;
      rs[i].gflops = s.flops() / t.median_s * 1e-9;
    };
    // The variants of one shape are timed in turns, one run of each per round (bench.h), except
    // OpenBLAS. Its own threads (not OpenMP's) spin for a while after each call and, on 2 cores,
    // made whichever kernel ran next 5-15x slower, and OpenMP's spinning after Ember's and MKL's
    // turns slowed it as much: it is checked and timed on its own after the others, once OpenMP's
    // threads sleep, and the next shape waits until OpenBLAS's have gone to sleep too.
    std::vector<std::function<void()>> in_turns;
    std::vector<size_t> turns_index;
    for (const std::string& v : cfg.variants)
      if (v != "blas")
        if (auto f = prepare(v)) in_turns.push_back(f), turns_index.push_back(rs.size() - 1);
    double idle = cfg.wait_quiet_s > 0 ? bench::wait_for_quiet(cfg.wait_quiet_s) : -1;
    std::vector<bench::Timing> ts = bench::measure_interleaved(in_turns, cfg.timing);
    for (size_t i = 0; i < ts.size(); ++i) record(turns_index[i], ts[i], idle);
    for (size_t i = 0; i < ts.size(); ++i)
      if (rs[turns_index[i]].variant == "packed")
        for (size_t j = 0; j < ts.size(); ++j)
          if (j != i) rs[turns_index[j]].packed_speedup_in_turns = bench::paired_speedup(ts[i], ts[j]);
    if (std::count(cfg.variants.begin(), cfg.variants.end(), "blas")) {
      if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(kOpenMpSpinMs));
      if (auto f = prepare("blas")) {
        record(rs.size() - 1, bench::measure(f, cfg.timing), idle);
        if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(kOpenBlasSpinMs));
      }
    }
    // Back in the order of --variants.
    std::vector<Result> ordered;
    for (const std::string& v : cfg.variants)
      for (const Result& r : rs)
        if (r.variant == v) ordered.push_back(r);
    rs = ordered;
    out.insert(out.end(), rs.begin(), rs.end());
    progress.step(s.label);
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
