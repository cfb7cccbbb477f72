// bench_attention: Algorithm 0 (standard, and unfused: its steps as three whole-matrix passes),
// Algorithm 1 (flash) and FlashAttention-2 (flash2, the default CPU kernel), forward and
// forward+backward,
// over N, d and causal: median time, peak extra memory (Ember's allocator and the process's RSS),
// the bytes each kernel moves to and from main memory (counted), and the paper's models of them.
// The PyTorch peer runs in the same program run (peer_torch.py), with its threads limited to the cores.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "examples/common/bench.h"
#include "examples/common/peer_python.h"
#include "examples/common/progress_bar.h"

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "ember.h"
#include "framework/core/parallel.h"
#include "examples/attention/study/io_counters.h"
#include "examples/attention/study/study_kernels.h"
#include "ops/attention/attention.h"
#ifdef EMBER_HAS_CUDA
#include <cuda_runtime.h>

#include "ops/attention/cuda/attention_cuda.h"
#endif

using namespace ember;
using namespace ember::attention_study;  // the byte counters
using json = nlohmann::json;

namespace {


// Resident set size (current and peak) from /proc/self/status, in bytes; writing 5 to clear_refs
// resets the peak (VmHWM) to the current RSS.
int64_t status_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::strlen(key) + 1));
  return -1;
}
bool reset_rss_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return bool(f);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void sync(Device dev) {
#ifdef EMBER_HAS_CUDA
  if (dev == Device::CUDA) cudaDeviceSynchronize();
#endif
  (void)dev;
}

// GPU timing as DESIGN.md asks: CUDA events around the run, and the L2 cache flushed before it (by
// writing a buffer twice its size), so that no run starts with its inputs already in the L2.
// On the CPU it is the wall clock.
class RunTimer {
 public:
  explicit RunTimer(Device dev) : dev_(dev) {
#ifdef EMBER_HAS_CUDA
    if (dev_ == Device::CUDA) {
      int l2 = 0;
      check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "cudaDeviceGetAttribute");
      flush_bytes_ = size_t(std::max(l2, 1 << 20)) * 2;
      check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc");
      check(cudaEventCreate(&start_), "cudaEventCreate");
      check(cudaEventCreate(&stop_), "cudaEventCreate");
    }
#endif
  }
  ~RunTimer() {
#ifdef EMBER_HAS_CUDA
    if (flush_) cudaFree(flush_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
#endif
  }
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;

  template <class F>
  double time_ms(F&& run) {
#ifdef EMBER_HAS_CUDA
    if (dev_ == Device::CUDA) {
      check(cudaMemset(flush_, 0, flush_bytes_), "cudaMemset (L2 flush)");
      check(cudaEventRecord(start_), "cudaEventRecord");
      run();
      check(cudaEventRecord(stop_), "cudaEventRecord");
      check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      return double(ms);
    }
#endif
    double t0 = now_s();
    run();
    return (now_s() - t0) * 1e3;
  }

 private:
#ifdef EMBER_HAS_CUDA
  static void check(cudaError_t e, const char* what) {
    EMBER_CHECK(e == cudaSuccess, "bench_attention: ", what, " failed: ", cudaGetErrorString(e));
  }
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
#endif
  Device dev_;
};


// The two forms of Algorithm 0, both with N x N buffers (--max-standard-n skips them).
bool is_standard(const std::string& impl) { return impl == "standard" || impl == "unfused"; }

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Config {
  int64_t n, d;
  bool causal;
};

struct Measure {
  double median_ms = 0, min_ms = 0;
  double cpu_ms = 0;  // median process CPU time (all threads) per run: the work, whatever the machine's load
  int64_t peak_extra_bytes = 0;  // Ember allocator: peak - current before the call
  int64_t rss_extra_bytes = -1;  // process: peak RSS - RSS before the call (CPU only)
  int64_t read_bytes = 0, write_bytes = 0;
  double scores_ms = -1, softmax_ms = -1, output_ms = -1;  // unfused: median time of each forward step
};


}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_attention",
                           "Standard attention (Algorithm 0) vs FlashAttention (Algorithm 1) vs FlashAttention-2: time, peak memory and "
                           "bytes moved, forward and forward+backward, over sequence length N, head size d, causal.");
  options.add_options()
      ("device", "cpu or cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("seq", "sequence lengths N, comma separated (default: cpu 256..4096, cuda 256..16384)", cxxopts::value<std::string>()->default_value(""))
      ("full", "the full sweep N = 256..16384 (long on the CPU: N = 8192 and 16384 alone, d = 64, non-causal, took 10 minutes here)")
      ("head-dim", "head sizes d", cxxopts::value<std::string>()->default_value("64,128"))
      ("causal", "both | on | off", cxxopts::value<std::string>()->default_value("both"))
      ("impls", "algorithms to time, comma separated: standard, unfused (Algorithm 0 as three passes over the whole N x N matrix, timed per step), flash, flash2", cxxopts::value<std::string>()->default_value("standard,flash,flash2"))
      ("batch", "batch size B", cxxopts::value<int64_t>()->default_value("1"))
      ("heads", "heads H", cxxopts::value<int64_t>()->default_value("1"))
      ("dtype", "float32 or float64", cxxopts::value<std::string>()->default_value("float32"))
      ("block-m", "flash on-chip budget M in floats (0: half of the L2 cache)", cxxopts::value<int64_t>()->default_value("0"))
      ("repeats", "timed runs per measurement (median reported)", cxxopts::value<int>()->default_value("3"))
      ("warmup", "untimed runs first", cxxopts::value<int>()->default_value("1"))
      ("max-standard-n", "skip the standard algorithm above this N (its N x N buffers)", cxxopts::value<int64_t>()->default_value("16384"))
      ("peer", "run the PyTorch peer (peer_torch.py) in the same run")
      ("python", "python with torch for the peer", cxxopts::value<std::string>()->default_value(bench::peer::default_python()))
      ("json", "write the results as JSON to this path", cxxopts::value<std::string>())
      ("h,help", "print this help");
  cxxopts::ParseResult args;
  try {
    args = ember::cli::parse(options, argc, argv);
    // The results file is checked now: a missing folder fails before the run, not after it.
    if (args.count("json")) ember::cli::output_path("--json", args["json"].as<std::string>());
  } catch (const std::exception& e) {
    std::cerr << "bench_attention: " << e.what() << "\n" << options.help() << "\n";
    return 2;
  }
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  try {
    Device dev = parse_device(args["device"].as<std::string>());
#ifdef EMBER_HAS_CUDA
    if (dev == Device::CUDA) EMBER_CHECK(cuda_attn::available(), "bench_attention: --device cuda but no usable GPU");
#else
    EMBER_CHECK(dev == Device::CPU, "bench_attention: this build has no CUDA backend (configure with -DEMBER_CUDA=ON)");
#endif
    std::vector<int64_t> ns = cli::int_list(args["seq"].as<std::string>(), "--seq", "sequence lengths such as 1024,4096");
    if (ns.empty()) {
      if (args.count("full") || dev == Device::CUDA) ns = {256, 512, 1024, 2048, 4096, 8192, 16384};
      else ns = {256, 512, 1024, 2048, 4096};
    }
    std::vector<int64_t> ds = cli::int_list(args["head-dim"].as<std::string>(), "--head-dim", "head sizes such as 64");
    std::string cm = args["causal"].as<std::string>();
    EMBER_CHECK(cm == "both" || cm == "on" || cm == "off", "bench_attention: --causal must be both, on or off, got ", cm);
    std::vector<bool> causals = cm == "both" ? std::vector<bool>{false, true} : std::vector<bool>{cm == "on"};
    std::string dts = args["dtype"].as<std::string>();
    EMBER_CHECK(dts == "float32" || dts == "float64", "bench_attention: --dtype must be float32 or float64");
    DType dt = dts == "float32" ? DType::Float32 : DType::Float64;
    const int64_t B = ember::cli::flag<int64_t>(args, "batch", 1, 1 << 20), H = ember::cli::flag<int64_t>(args, "heads", 1, 4096);
    const int repeats = std::max(1, ember::cli::flag<int>(args, "repeats", 1, 1000000)), warmup = std::max(0, ember::cli::flag<int>(args, "warmup", 0, 1000000));
    const int64_t block_m = ember::cli::flag<int64_t>(args, "block-m", 0, int64_t(1) << 26), max_std = ember::cli::flag<int64_t>(args, "max-standard-n", 0, 1 << 24);

    register_attention_study_kernels();  // "standard", "unfused" and "flash" on the CPU, beside the library's "flash2"
    std::vector<std::string> impls;
    {
      std::stringstream ss(args["impls"].as<std::string>());
      for (std::string item; std::getline(ss, item, ',');) impls.push_back(parse_attention_impl(item, dev));
      EMBER_CHECK(!impls.empty(), "bench_attention: --impls names no algorithm");
    }
    std::vector<Config> configs;
    for (int64_t d : ds)
      for (bool c : causals)
        for (int64_t n : ns) configs.push_back({n, d, c});

    std::string machine = dev == Device::CPU ? ember::bench::cpu_name() : "cuda";
#ifdef EMBER_HAS_CUDA
    if (dev == Device::CUDA) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) machine = prop.name;
    }
#endif
    const int64_t m_used = block_m > 0 ? block_m : default_attention_block_m();
    std::printf("bench_attention on %s (%s), %d threads, B=%lld H=%lld, %s, M=%lld floats, median of %d\n",
                machine.c_str(), name(dev), num_threads(), (long long)B, (long long)H, dts.c_str(), (long long)m_used, repeats);

    json results = json::array();
    RunTimer timer(dev);
    int total = 0;
    for (const Config& c : configs)
      for (const std::string& impl : impls) total += is_standard(impl) && c.n > max_std ? 0 : 2;
    examples::ProgressBar progress("attention", total, true, stderr, "runs");
    struct Row {
      Config c;
      std::string impl, mode;
      Measure m;
      double max_diff;
    };
    std::vector<Row> rows;
    for (const Config& c : configs) {
      Generator gen(uint64_t(c.n * 131 + c.d * 7 + c.causal));
      Shape shape{B, H, c.n, c.d};
      Tensor q = randn(shape, dt, &gen).to(dev), k = randn(shape, dt, &gen).to(dev), v = randn(shape, dt, &gen).to(dev),
             dout = randn(shape, dt, &gen).to(dev);
      // The four variants of this configuration; their timed runs are interleaved (round robin) so
      // that a change in the machine's load during the sweep affects all of them alike.
      struct Variant {
        std::string impl;
        std::string mode;
        Measure m;
        double max_diff = 0;
        std::vector<double> ts, cpu, steps[3];
      };
      std::vector<Variant> vars;
      for (const std::string& impl : impls)
        for (std::string mode : {"fwd", "fwd+bwd"})
          if (!(is_standard(impl) && c.n > max_std)) vars.push_back({impl, mode, {}, 0, {}, {}, {}});
      Tensor out, ref_out;
      auto run = [&](const Variant& var) {
        AttentionOptions o;
        o.impl = var.impl;
        o.causal = c.causal;
        o.block_m = block_m;
        if (var.mode == "fwd") {
          out = attention(q, k, v, o);
        } else {
          auto [ys, vjp] = make_vjp(
              [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{attention(x[0], x[1], x[2], o)}; }, {q, k, v});
          out = ys[0];
          vjp({dout});
        }
        sync(dev);
      };
      for (Variant& var : vars) {
        progress.step(str(var.impl, " ", var.mode, " N=", c.n, " d=", c.d, c.causal ? " causal" : ""));
        // Memory: one run from an empty cache, so that the allocator and the RSS see fresh pages.
        out = Tensor();
        allocator(dev).empty_cache();
        malloc_trim(0);  // and glibc's free lists, so that the RSS peak sees the pages this call touches
        int64_t base = memory_stats(dev).current_bytes;
        reset_peak_memory(dev);
        int64_t rss0 = status_kb("VmRSS:");
        bool rss_ok = dev == Device::CPU && reset_rss_peak();
        // Bytes: counted on the same run (the study's CPU kernels only; flash2 counts nothing).
        reset_attention_io();
        set_attention_io_counting(dev == Device::CPU);
        run(var);
        set_attention_io_counting(false);
        AttentionIo io = attention_io();
        var.m.read_bytes = io.read_bytes;
        var.m.write_bytes = io.write_bytes;
        var.m.peak_extra_bytes = memory_stats(dev).peak_bytes - base;
        if (rss_ok) var.m.rss_extra_bytes = (status_kb("VmHWM:") - rss0) * 1024;
        if (var.mode == "fwd") {  // flash is checked against standard on the same inputs
          Tensor oc = out.to(Device::CPU);
          if (var.impl == "standard") ref_out = oc;
          else if (ref_out.defined()) var.max_diff = max(abs(oc - ref_out)).item();
        }
        out = Tensor();
        for (int i = 0; i < warmup; ++i) run(var);
        out = Tensor();
      }
      for (int i = 0; i < repeats; ++i)
        for (Variant& var : vars) {
          double c0 = cpu_s();
          var.ts.push_back(timer.time_ms([&] { run(var); }));
          var.cpu.push_back((cpu_s() - c0) * 1e3);
          if (var.impl == "unfused") {
            AttentionPhaseTimes t = last_unfused_phase_times();
            var.steps[0].push_back(t.scores_ms), var.steps[1].push_back(t.softmax_ms), var.steps[2].push_back(t.output_ms);
          }
          out = Tensor();
        }
      for (Variant& var : vars) {
        var.m.median_ms = bench::median(var.ts);
        var.m.min_ms = *std::min_element(var.ts.begin(), var.ts.end());
        var.m.cpu_ms = bench::median(var.cpu);
        if (!var.steps[0].empty()) {
          var.m.scores_ms = bench::median(var.steps[0]);
          var.m.softmax_ms = bench::median(var.steps[1]);
          var.m.output_ms = bench::median(var.steps[2]);
        }
        rows.push_back({c, var.impl, var.mode, var.m, var.max_diff});
      }
    }

    progress.finish();

    // Peer: PyTorch on the same configurations, in this run.
    std::map<std::string, json> peer;
    std::string peer_note;
    nlohmann::json peer_info;
    if (args.count("peer") && dev == Device::CPU) {
      std::string script = std::string(EMBER_SOURCE_DIR) + "/examples/attention/peer_torch.py";
      std::ostringstream cmd;
      // OPENBLAS_CORETYPE for this command alone: examples/common/openblas_core.h's choice.
      const bench::peer::PythonPeer& pp = bench::peer::cached_python_peer(args["python"].as<std::string>());
      std::printf("peer: %s\n", pp.summary().c_str());
      peer_info = pp.to_json();
      cmd << pp.prefix() << " " << args["python"].as<std::string>() << " " << script
          << " --threads " << num_threads() << " --blas-threads " << num_threads() << " --repeats " << repeats << " --warmup " << warmup << " --batch " << B
          << " --heads " << H << " --dtype " << dts << " --max-n " << max_std << " --configs ";
      for (size_t i = 0; i < configs.size(); ++i)
        cmd << (i ? "," : "") << configs[i].n << ":" << configs[i].d << ":" << int(configs[i].causal);
      std::fprintf(stderr, "peer: %s\n", cmd.str().c_str());
      FILE* p = popen(cmd.str().c_str(), "r");
      EMBER_CHECK(p, "bench_attention: could not start the PyTorch peer");
      std::string outp;
      char buf[4096];
      size_t got;
      while ((got = fread(buf, 1, sizeof buf, p)) > 0) outp.append(buf, got);
      int rc = pclose(p);
      if (rc != 0) {
        peer_note = "peer failed (exit " + std::to_string(rc) + ")";
      } else {
        json pj = json::parse(outp);
        peer_note = pj.value("note", "");
        for (auto& r : pj["results"])
          peer[str(r["n"].get<int64_t>(), ":", r["d"].get<int64_t>(), ":", int(r["causal"].get<bool>()), ":",
                   r["mode"].get<std::string>())] = r;
      }
    }

    // Table.
    std::printf("\n%6s %4s %6s %-8s %-7s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "N", "d", "causal", "impl", "mode",
                "ms", "min_ms", "cpu_ms", "peak_MiB", "rss_MiB", "read_MiB", "write_MiB", "model_0", "model_1", "torch_ms");
    for (const Row& r : rows) {
      const double n = double(r.c.n), d = double(r.c.d), MiB = 1024.0 * 1024.0, E = double(itemsize(dt)) * B * H;
      // The paper's access models in bytes (constants 1): Nd + N^2 for Algorithm 0, N^2 d^2 / M for Algorithm 1.
      double model0 = (n * d + n * n) * E / MiB, model1 = (n * n * d * d / double(m_used)) * E / MiB;
      std::string key = str(r.c.n, ":", r.c.d, ":", int(r.c.causal), ":", r.mode);
      double torch_ms = peer.count(key) ? peer[key].value("ms", -1.0) : -1.0;
      char tb[32] = "-";
      if (torch_ms >= 0) std::snprintf(tb, sizeof tb, "%.2f", torch_ms);
      std::printf("%6lld %4lld %6s %-8s %-7s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.1f %9.1f %9s\n", (long long)r.c.n,
                  (long long)r.c.d, r.c.causal ? "yes" : "no", r.impl.c_str(), r.mode.c_str(), r.m.median_ms, r.m.min_ms, r.m.cpu_ms,
                  r.m.peak_extra_bytes / MiB, r.m.rss_extra_bytes < 0 ? -1.0 : r.m.rss_extra_bytes / MiB,
                  r.m.read_bytes / MiB, r.m.write_bytes / MiB, model0, model1, tb);
      json j = {{"n", r.c.n},
                {"d", r.c.d},
                {"causal", r.c.causal},
                {"impl", r.impl},
                {"mode", r.mode},
                {"median_ms", r.m.median_ms},
                {"min_ms", r.m.min_ms},
                {"cpu_ms", r.m.cpu_ms},
                {"peak_extra_bytes", r.m.peak_extra_bytes},
                {"rss_extra_bytes", r.m.rss_extra_bytes},
                {"read_bytes", r.m.read_bytes},
                {"write_bytes", r.m.write_bytes},
                {"model0_bytes", model0 * MiB},
                {"model1_bytes", model1 * MiB},
                {"max_abs_diff_vs_standard", r.max_diff}};
      if (peer.count(key)) j["torch"] = peer[key];
      if (r.m.scores_ms >= 0)
        j["steps_ms"] = {{"scores", r.m.scores_ms}, {"softmax", r.m.softmax_ms}, {"output", r.m.output_ms}};
      results.push_back(j);
    }
    bool any_steps = false;
    for (const Row& r : rows) {
      if (r.m.scores_ms < 0) continue;
      if (!any_steps) std::printf("\nunfused forward, median ms per step (S = scale Q K^T | softmax | O = P V):\n");
      any_steps = true;
      std::printf("  N=%lld d=%lld %-6s %-7s %9.2f %9.2f %9.2f\n", (long long)r.c.n, (long long)r.c.d,
                  r.c.causal ? "causal" : "", r.mode.c_str(), r.m.scores_ms, r.m.softmax_ms, r.m.output_ms);
    }
    if (!peer_note.empty()) std::printf("peer: %s\n", peer_note.c_str());
    std::printf("(ms: median wall time, min_ms: fastest run, cpu_ms: median CPU time of all threads; peak_MiB: Ember allocator peak minus memory held before the call; rss_MiB: process peak RSS growth;\n"
                " read/write_MiB: bytes the kernels moved to/from main memory, counted; model_0 = (Nd + N^2) x bytes,\n"
                " model_1 = N^2 d^2 / M x bytes, the paper's Theta() with constant 1, for comparison of growth)\n");

    if (args.count("json")) {
      json doc = {{"program", "bench_attention"},
                  {"device", name(dev)},
                  {"machine", machine},
                  {"threads", num_threads()},
                  {"batch", B},
                  {"heads", H},
                  {"dtype", dts},
                  {"block_m", m_used},
                  {"repeats", repeats},
                  {"peer_note", peer_note},
                {"peer", peer_info},
                  {"results", results}};
      bench::write_json(args["json"].as<std::string>(), doc);
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";  // ember::Error messages name the op or program
    return 1;
  }
  return 0;
}
