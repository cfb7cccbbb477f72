// bench_matmul: GFLOP/s of every matmul variant of a device, peers in the same run.
//   bench_matmul --device cpu [--json results.json]
// Square products n x n x n for --sizes, and the GPT-2 (small) products of a 64-token step.
#include <cxxopts.hpp>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "examples/common/openblas_core.h"
#include "examples/common/peer_python.h"
#include "examples/matmul/matmul_bench.h"
#include "ops/matmul/cpu/kernels.h"

using namespace ember;
using namespace ember::matmul_bench;

namespace {

// GPT-2 small (d = 768, 4d = 3072) on one sequence chunk of `tokens` rows.
std::vector<Case> gpt2_cases(int64_t tokens) {
  auto lbl = [&](const char* what, int64_t k, int64_t n) {
    return str("gpt2 ", what, " ", tokens, "x", k, "@", k, "x", n);
  };
  return {{tokens, 768, 2304, lbl("qkv", 768, 2304)},
          {tokens, 768, 768, lbl("proj", 768, 768)},
          {tokens, 768, 3072, lbl("fc", 768, 3072)},
          {tokens, 3072, 768, lbl("fc2", 3072, 768)}};
}

void print_table(const std::vector<Result>& results, const std::vector<std::string>& variants) {
  std::vector<std::string> labels;
  for (const Result& r : results)
    if (labels.empty() || labels.back() != r.shape.label) labels.push_back(r.shape.label);
  auto has = [&](const char* v) { return std::count(variants.begin(), variants.end(), v) > 0; };
  // Ember's packed kernel as a share of each peer measured beside it.
  std::vector<std::string> peers;
  for (const char* p : {"blas", "mkl"})
    if (has("packed") && has(p)) peers.push_back(p);
  // Where packed and a peer took turns (mkl), its column is the median of their per-round ratios,
  // which a drifting machine moves less than the ratio of the two medians; OpenBLAS, timed on its
  // own, gets the ratio of the medians.
  std::cout << "GFLOP/s (median)" << (has("packed") && has("mkl") ? "; packed/mkl: the median of the per-round ratios" : "")
            << "\n" << std::string(28, ' ');
  for (const std::string& v : variants) std::cout << bench::cell(v, 10);
  for (const std::string& p : peers) std::cout << bench::cell("packed/" + p, 13);
  std::cout << "\n";
  for (const std::string& l : labels) {
    std::cout << l << std::string(size_t(std::max(0, 28 - int(l.size()))), ' ');
    std::map<std::string, double> g, paired;
    for (const std::string& v : variants)
      for (const Result& r : results)
        if (r.shape.label == l && r.variant == v) {
          if (!r.note.empty() && r.gflops == 0) std::cout << bench::cell(r.note.rfind("FAILED", 0) == 0 ? "FAILED" : "-", 10);
          else std::cout << bench::cell(r.gflops, 10);
          g[v] = r.gflops;
          paired[v] = r.packed_speedup_in_turns;
        }
    for (const std::string& p : peers) {
      const double share = paired[p] > 0 ? paired[p] : g[p] > 0 ? g["packed"] / g[p] : 0;
      std::cout << (share > 0 ? bench::cell(100 * share, 12, 0) + "%" : bench::cell("-", 13));
    }
    std::cout << "\n";
  }
  for (const Result& r : results)
    if (r.variant == "mkl" && r.note.rfind("skipped", 0) == 0) {
      std::cout << "mkl " << r.note << "\n";
      break;
    }
  int noisy = 0;
  for (const Result& r : results) {
    if (r.note.rfind("FAILED", 0) == 0) std::cout << "  " << r.shape.label << " " << r.variant << ": " << r.note << "\n";
    noisy += r.idle_before >= 0 && r.idle_before < 0.9;
  }
  if (noisy) std::cout << noisy << " measurement(s) started while other processes used more than 10% of the CPUs\n";
}

}  // namespace

int main(int argc, char** argv) {
  // The OpenBLAS peer runs in this process, so its core is fixed when the library loads: answer
  // the probe, then re-execute once under the core openblas_core.h chooses (OpenBLAS's own pick,
  // or the best one it accepts where it fell below the CPU's ISA; OPENBLAS_L2_SIZE unset).
  auto own_core = [] { return bench::openblas::core_from_description(cpu::blas_description()); };
  if (bench::openblas::probe_requested()) {
    std::cout << own_core() << "\n";
    return 0;
  }
  bench::openblas::Decision blas_core;
  bool have_blas = cpu::blas_available();
  if (have_blas) blas_core = bench::openblas::apply_to_self(argv, own_core);
  cxxopts::Options options("bench_matmul", "GFLOP/s of every matmul variant on a device, with peers in the same run.\n"
                                           "The OpenBLAS peer runs with the OPENBLAS_CORETYPE that examples/common/openblas_core.h\n"
                                           "chooses for this CPU (bench_matmul re-executes itself under it; the header shows the core).\n"
                                           "On a shared machine add OMP_WAIT_POLICY=passive (idle OpenMP threads then stop\n"
                                           "spinning, which would take cores from the thread being waited for and from the peer).");
  options.add_options()
      ("device", "cpu or cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("sizes", "square sizes n (n x n @ n x n), comma-separated", cxxopts::value<std::string>()->default_value("64,128,256,512,1024,2048"))
      ("shapes", "extra products MxKxN (M x K @ K x N), comma-separated, e.g. 128x784x256; MxKxNt gives B as the transpose of an N x K matrix (a Linear weight, GPT-2's tied LM head)", cxxopts::value<std::string>()->default_value(""))
      ("gpt2-tokens", "rows of the GPT-2 products (0: skip them)", cxxopts::value<int64_t>()->default_value("64"))
      ("variants", "comma-separated; cpu: naive,ikj,blocked,packed,auto,blas (any registered CPU variant), and mkl (the MKL of --python's torch, called in this process). The variants of one shape are timed in turns, one run each per round", cxxopts::value<std::string>()->default_value(""))
      ("python", "the peer's Python, whose torch provides the mkl variant", cxxopts::value<std::string>()->default_value(ember::bench::peer::default_python()))
      ("dtype", "float32 or float64", cxxopts::value<std::string>()->default_value("float32"))
      ("warmup", "untimed runs per variant and shape", cxxopts::value<int>()->default_value("2"))
      ("repeats", "timed runs (the median is reported)", cxxopts::value<int>()->default_value("7"))
      ("max-seconds", "stop repeating (after 3 runs) once the timed runs took this long", cxxopts::value<double>()->default_value("5"))
      ("threads", "CPU threads for Ember and OpenBLAS (0: all cores)", cxxopts::value<int>()->default_value("0"))
      ("naive-max", "skip the naive variant when a dimension exceeds this", cxxopts::value<int64_t>()->default_value("512"))
      ("fma-units", "FMA pipes per core, for the theoretical peak (shown only where cpufreq gives the max clock)", cxxopts::value<int>()->default_value("2"))
      ("wait-quiet", "before each measurement wait up to this many seconds for the CPUs to be 90% idle (shared machines)", cxxopts::value<double>()->default_value("0"))
      ("pages", "cpu: where the operands lie, for every variant alike: ember (Ember's tensors: huge pages from 2 MiB on, where Linux gives them) or 4k (copies on 4 KiB pages, where a NumPy array or a PyTorch tensor lies by default)", cxxopts::value<std::string>()->default_value("ember"))
      ("seed", "random seed of the operands", cxxopts::value<uint64_t>()->default_value("1"))
      ("json", "write the results to this JSON file", cxxopts::value<std::string>())
      ("h,help", "show this help");
  try {
    auto args = ember::cli::parse(options, argc, argv);
    // The results file is checked now: a missing folder fails before the run, not after it.
    if (args.count("json")) ember::cli::output_path("--json", args["json"].as<std::string>());
    if (args.count("help")) {
      std::cout << options.help() << std::endl;
      return 0;
    }
    std::string device = args["device"].as<std::string>();
    MatmulBenchRegistry registry;
    register_cpu_matmul_bench(registry);
#ifdef EMBER_MATMUL_CUDA_BENCH
    register_cuda_matmul_bench(registry);
#endif
    const DeviceBench* backend = nullptr;
    for (const DeviceBench& d : registry)
      if (d.device == device) backend = &d;
    if (!backend) {
      if (device == "cuda") {
        std::cerr << "bench_matmul: the CUDA variants (naive, tiled, register_tiled, cublas) are provided by the CUDA "
                     "build: configure with -DEMBER_CUDA=ON on a machine with nvcc. This binary has no CUDA back-end.\n";
        return 2;
      }
      std::cerr << "bench_matmul: unknown device '" << device << "' (expected cpu or cuda)\n";
      return 2;
    }

    Config cfg;
    for (int64_t n : cli::int_list(args["sizes"].as<std::string>(), "--sizes", "square sizes such as 256,512")) {
      EMBER_CHECK(n > 0, "bench_matmul: sizes must be positive, got ", n);
      cfg.cases.push_back({n, n, n, str("n=", n)});
    }
    for (const std::string& s : cli::split_commas(args["shapes"].as<std::string>())) {
      int64_t m = 0, k = 0, n = 0;
      char x1 = 0, x2 = 0;
      std::istringstream is(s);
      is >> m >> x1 >> k >> x2 >> n;
      std::string rest;
      const bool ok = !is.fail() && x1 == 'x' && x2 == 'x' && m > 0 && k > 0 && n > 0;
      if (ok) std::getline(is, rest);
      EMBER_CHECK(ok && (rest.empty() || rest == "t"),
                  "bench_matmul: --shapes wants MxKxN with positive sizes, or MxKxNt for B given transposed, got '", s,
                  "'");
      Case c{m, k, n, rest == "t" ? str(m, "x", k, "@(", n, "x", k, ")^T") : str(m, "x", k, "@", k, "x", n)};
      c.b_transposed = rest == "t";
      EMBER_CHECK(!c.b_transposed || device == "cpu", "bench_matmul: a transposed B (", s, ") is measured on the CPU only");
      cfg.cases.push_back(c);
    }
    int64_t tokens = ember::cli::flag<int64_t>(args, "gpt2-tokens", 0, 1 << 20);
    if (tokens > 0)
      for (const Case& c : gpt2_cases(tokens)) cfg.cases.push_back(c);
    std::string vs = args["variants"].as<std::string>();
    cfg.variants = cli::split_commas(vs.empty() && device == "cpu" ? "naive,ikj,blocked,packed,blas" : vs);
    cfg.dtype = args["dtype"].as<std::string>() == "float64" ? DType::Float64 : DType::Float32;
    EMBER_CHECK(args["dtype"].as<std::string>() == "float64" || args["dtype"].as<std::string>() == "float32",
                "bench_matmul: --dtype must be float32 or float64");
    cfg.timing.warmup = ember::cli::flag<int>(args, "warmup", 0, 1000000);
    cfg.timing.repeats = ember::cli::flag<int>(args, "repeats", 1, 1000000);
    cfg.timing.min_repeats = std::min(3, cfg.timing.repeats);
    cfg.timing.max_seconds = ember::cli::flag<double>(args, "max-seconds", 0, 1e6);
    cfg.threads = ember::cli::flag<int>(args, "threads", 0, ember::cli::kMaxThreads);
    cfg.naive_max = ember::cli::flag<int64_t>(args, "naive-max", 0, 1 << 16);
    cfg.fma_units = ember::cli::flag<int>(args, "fma-units", 1, 16);
    cfg.seed = args["seed"].as<uint64_t>();
    cfg.wait_quiet_s = ember::cli::flag<double>(args, "wait-quiet", 0, 3600);
    cfg.python = args["python"].as<std::string>();
    const std::string pages = args["pages"].as<std::string>();
    EMBER_CHECK(pages == "ember" || pages == "4k", "bench_matmul: --pages must be ember or 4k, got '", pages, "'");
    cfg.small_pages = pages == "4k";

    nlohmann::json machine = backend->describe ? backend->describe(cfg) : nlohmann::json::object();
    for (auto& [k, v] : machine.items()) std::cout << k << ": " << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
    if (device == "cpu" && have_blas) {
      machine["openblas"] = blas_core.to_json();
      std::cout << "openblas_core: " << blas_core.summary() << "\n";
      std::cout << "openblas_decision: " << blas_core.reason << "\n";
      if (!blas_core.chosen.empty() && bench::openblas::lower(blas_core.actual) != bench::openblas::lower(blas_core.chosen))
        std::cout << "WARNING: OpenBLAS runs " << blas_core.actual << ", not the chosen " << blas_core.chosen << "\n";
    }
    std::cout << "dtype: " << name(cfg.dtype) << "\n\n";

    std::vector<Result> results = backend->run(cfg);
    print_table(results, cfg.variants);

    if (args.count("json")) {
      nlohmann::json j = {{"program", "bench_matmul"}, {"device", device}, {"dtype", name(cfg.dtype)}, {"machine", machine}};
      j["results"] = nlohmann::json::array();
      for (const Result& r : results)
        j["results"].push_back({{"device", r.device},
                                {"variant", r.variant},
                                {"label", r.shape.label},
                                {"m", r.shape.m},
                                {"k", r.shape.k},
                                {"n", r.shape.n},
                                {"b_transposed", r.shape.b_transposed},
                                {"gflops", r.gflops},
                                {"gflops_per_cpu_second", r.timing.cpu_median_s > 0 ? r.shape.flops() / r.timing.cpu_median_s * 1e-9 : 0.0},
                                {"timing", bench::to_json(r.timing)},
                                {"max_rel_err", r.max_rel_err},
                                {"idle_before", r.idle_before},
                                {"note", r.note},
                                {"packed_speedup_in_turns", r.packed_speedup_in_turns}});
      bench::write_json(args["json"].as<std::string>(), j);
      std::cout << "wrote " << args["json"].as<std::string>() << "\n";
    }
    bool failed = false;
    for (const Result& r : results) failed |= r.note.rfind("FAILED", 0) == 0;
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    const std::string what = e.what();  // most checks name the program already
    std::cerr << (what.rfind("bench_matmul: ", 0) == 0 ? "" : "bench_matmul: ") << what << "\n";
    return 2;
  }
}
