// bench_sparse: the sparse-matmul study. SpMV (y = A x) and SpGEMM (C = A A) on square random
// matrices across densities and sizes: Ember's CPU kernels (1 and 2 threads), cuSPARSE, dense
// (Ember's matmul on the CPU, cuBLAS on the GPU), and SciPy's CSR on the identical matrices, each
// timed as the operation alone and with its setup costs. Also: this machine's copy bandwidth,
// SpMV's share of it, a phase profile of one case, and the density where dense wins.
#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "examples/common/bandwidth.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/progress_bar.h"
#include "cases.h"
#include "cpu_bench.h"
#include "examples/common/cli_lists.h"
#include "framework/core/parallel.h"
#include "gpu_bench.h"
#include "ops/sparse/sparse_ops.h"
#include "peer.h"

using namespace ember;
using namespace ::bench;  // bench_util.h (ember::bench is examples/common/bench.h)

namespace {

std::string density_id(double d) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", d);
  return b;
}

// "-" for a missing value, else 3 significant digits.
std::string fmt(const json& row, const std::string& k, const char* f = "%.3g") {
  if (!row.contains(k) || row[k].is_null()) return "-";
  char b[32];
  std::snprintf(b, sizeof b, f, row[k].get<double>());
  return b;
}
std::string ratio(const json& row, const std::string& num, const std::string& den) {
  if (!row.contains(num) || !row.contains(den)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", row[num].get<double>() / row[den].get<double>());
  return b;
}

// The lowest measured density at which `fast` (e.g. dense) takes no longer than `slow` (sparse),
// with a log-log interpolation of the crossing between that density and the one before.
json crossover(const std::vector<json>& rows, int64_t n, const std::string& sparse_key, const std::string& dense_key) {
  std::vector<std::pair<double, double>> pts;  // density, log(sparse / dense)
  for (const json& r : rows)
    if (r["n"] == n && r.contains(sparse_key) && r.contains(dense_key))
      pts.push_back({r["density"].get<double>(), std::log(r[sparse_key].get<double>() / r[dense_key].get<double>())});
  std::sort(pts.begin(), pts.end());
  json out{{"n", n}, {"sparse", sparse_key}, {"dense", dense_key}};
  if (pts.empty()) {
    out["result"] = "not measured";
    return out;
  }
  for (size_t i = 0; i < pts.size(); ++i)
    if (pts[i].second >= 0) {
      if (i == 0) {
        out["result"] = "dense at least as fast at every measured density (from " + density_id(pts[0].first) + ")";
        out["density"] = pts[0].first;
      } else {
        double l0 = std::log(pts[i - 1].first), l1 = std::log(pts[i].first);
        double t = -pts[i - 1].second / (pts[i].second - pts[i - 1].second);
        double d = std::exp(l0 + t * (l1 - l0));
        out["density"] = d;
        out["result"] = "dense wins from about " + density_id(d) + " (between measured " + density_id(pts[i - 1].first) +
                        " and " + density_id(pts[i].first) + ")";
      }
      return out;
    }
  out["result"] = "sparse faster at every measured density (up to " + density_id(pts.back().first) + ")";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("bench_sparse",
                        "SpMV and SpGEMM across densities: Ember CPU, cuSPARSE, dense (Ember matmul / cuBLAS) and SciPy "
                        "on identical matrices, op alone and with setup costs.");
  // clang-format off
  opts.add_options()
    ("device", "cpu | cuda | all", cxxopts::value<std::string>()->default_value("cpu"))
    ("spmv-sizes", "square sizes n for SpMV", cxxopts::value<std::string>()->default_value("1024,8192"))
    ("spgemm-sizes", "square sizes n for SpGEMM (C = A A)", cxxopts::value<std::string>()->default_value("512,1024,2048"))
    ("densities", "densities (nonzero probability per entry)",
     cxxopts::value<std::string>()->default_value("1e-5,1e-4,1e-3,0.01,0.05,0.1,0.2,0.5"))
    ("large-n", "one larger SpMV size, far beyond the caches (0: none)", cxxopts::value<int64_t>()->default_value("1000000"))
    ("large-densities", "densities for --large-n", cxxopts::value<std::string>()->default_value("1e-5,3e-5"))
    ("threads", "Ember thread counts to time", cxxopts::value<std::string>()->default_value("1,2"))
    ("warmup", "untimed calls before timing", cxxopts::value<int>()->default_value("1"))
    ("repeats", "timed samples (median reported)", cxxopts::value<int>()->default_value("5"))
    ("max-products", "skip SpGEMM cases with more multiply-adds", cxxopts::value<double>()->default_value("5e8"))
    ("max-dense-mb", "largest dense matrix compared against (MiB)", cxxopts::value<int64_t>()->default_value("256"))
    ("max-dense-gemm-n", "largest n for Ember's dense GEMM (n^3 work)", cxxopts::value<int64_t>()->default_value("2048"))
    ("profile-n", "size of the phase-profiled case", cxxopts::value<int64_t>()->default_value("4096"))
    ("profile-density", "density of the phase-profiled case", cxxopts::value<double>()->default_value("0.01"))
    ("stream-mb", "array size for the copy-bandwidth test (MiB, each of two)", cxxopts::value<int64_t>()->default_value("256"))
    ("scipy", "run the SciPy peer", cxxopts::value<bool>()->default_value("true"))
    ("python", "Python with SciPy (default: the bench-deps venv's, else /usr/bin/python3)", cxxopts::value<std::string>()->default_value(""))
    ("peer-script", "the SciPy peer script", cxxopts::value<std::string>()->default_value(EMBER_SOURCE_DIR "/examples/sparse/scipy_peer.py"))
    ("work-dir", "where the matrices for the peer are written", cxxopts::value<std::string>()->default_value("/tmp/bench_sparse"))
    ("keep-files", "keep the matrix files", cxxopts::value<bool>()->default_value("false"))
    ("wait-quiet", "before each case, wait up to this many seconds for other processes to go idle",
     cxxopts::value<double>()->default_value("10"))
    ("quick", "a small, fast sweep (for checking the program)", cxxopts::value<bool>()->default_value("false"))
    ("json", "write all results as JSON to this path", cxxopts::value<std::string>())
    ("h,help", "this help");
  // clang-format on
  try {
    auto args = ember::cli::parse(opts, argc, argv);
    // The results file is checked now: a missing folder fails before the run, not after it.
    if (args.count("json")) ember::cli::output_path("--json", args["json"].as<std::string>());
    const std::string python = args["python"].as<std::string>().empty() ? peer_python() : args["python"].as<std::string>();
    if (args.count("help")) {
      std::cout << opts.help() << "\nTimes: 'op' = the operation alone on prepared operands (CSR built, data on the "
                                  "device, handles/descriptors/workspace cached).\n'setup' = starting from a dense "
                                  "float32 matrix in host memory: conversion, handles, workspace, transfers, op, result "
                                  "back to the host.\n";
      return 0;
    }
    Config cfg;
    cfg.warmup = ember::cli::flag<int>(args, "warmup", 0, 1000000);
    cfg.repeats = ember::cli::flag<int>(args, "repeats", 1, 1000000);
    cfg.threads.clear();
    for (int64_t t : cli::int_list(args["threads"].as<std::string>(), "--threads", "thread counts such as 1,2"))
      cfg.threads.push_back(int(t));
    cfg.max_products = ember::cli::flag<double>(args, "max-products", 0, 1e18);
    cfg.max_dense_bytes = ember::cli::flag<int64_t>(args, "max-dense-mb", 0, int64_t(1) << 23) << 20;
    cfg.max_dense_gemm_n = ember::cli::flag<int64_t>(args, "max-dense-gemm-n", 0, 1 << 20);
    std::vector<double> densities = cli::double_list(args["densities"].as<std::string>(), "--densities", "densities such as 1e-3,0.01");
    std::vector<double> spmv_sizes = cli::double_list(args["spmv-sizes"].as<std::string>(), "--spmv-sizes", "sizes such as 4096,16384");
    std::vector<double> spgemm_sizes = cli::double_list(args["spgemm-sizes"].as<std::string>(), "--spgemm-sizes", "sizes such as 1024,4096");
    std::vector<double> large_d = cli::double_list(args["large-densities"].as<std::string>(), "--large-densities", "densities such as 1e-4");
    int64_t large_n = ember::cli::flag<int64_t>(args, "large-n", 0, 1 << 24);
    int64_t profile_n = ember::cli::flag<int64_t>(args, "profile-n", 0, 1 << 24);
    double profile_d = ember::cli::flag<double>(args, "profile-density", 0, 1);
    int64_t stream_mb = ember::cli::flag<int64_t>(args, "stream-mb", 0, 1 << 20);
    if (args["quick"].as<bool>()) {
      densities = {1e-3, 0.05, 0.3};
      spmv_sizes = {256};
      spgemm_sizes = {256};
      large_n = 20000;
      large_d = {1e-3};
      profile_n = 512;
      cfg.repeats = 3;
      stream_mb = 32;
    }
    std::string device = args["device"].as<std::string>();
    EMBER_CHECK(device == "cpu" || device == "cuda" || device == "all", "bench_sparse: --device must be cpu, cuda or all, got '",
                device, "'");
    bool run_cpu = device != "cuda";
    std::string why;
    bool run_gpu = device != "cpu" && gpu_usable(&why);
    EMBER_CHECK(run_gpu || device != "cuda", "bench_sparse: --device cuda, but ", why);
    bool run_scipy = run_cpu && args["scipy"].as<bool>();
    std::string scipy_note = run_cpu ? "--scipy=false" : "--device cuda";
    if (run_scipy) {  // a missing Python or SciPy skips the peer instead of failing the whole sweep
      std::string probe = "'" + python + "' -c 'import scipy.sparse' > /dev/null 2>&1";
      if (std::system(probe.c_str()) != 0) {
        run_scipy = false;
        scipy_note = python + " cannot import scipy.sparse";
      }
    }
    int default_threads = num_threads();
    if (std::find(cfg.threads.begin(), cfg.threads.end(), default_threads) == cfg.threads.end())
      cfg.threads.push_back(default_threads);
    std::string main_t = key("ember", default_threads), main_setup = key("ember_setup", default_threads);

    json result;
    result["machine"] = {{"cpu", ember::bench::cpu_name()},
                         {"cores_used", default_threads},
                         {"l2_bytes", cache_bytes(2)},
                         {"l3_bytes", cache_bytes(3)},
                         {"gpu", run_gpu ? gpu_name() : "not measured (" + (device == "cpu" ? std::string("--device cpu") : why) + ")"}};
    std::string load0 = ember::bench::load_average();
    std::printf("bench_sparse  CPU: %s, %d threads (L2 %lld KiB, L3 %lld MiB)  GPU: %s\n", ember::bench::cpu_name().c_str(),
                default_threads, (long long)(cache_bytes(2) >> 10), (long long)(cache_bytes(3) >> 20),
                result["machine"]["gpu"].get<std::string>().c_str());
    std::printf("Hygiene: %d warm-up call(s), then %d samples per timing, each a batch of calls lasting >= 2 ms (CPU) "
                "or one event-timed call (GPU op); the median per call is reported (the minimum is kept in the JSON). "
                "The SciPy/NumPy peer runs right after Ember on each case, never at the same time, with the same "
                "scheme. Load average before: %s (other processes are not under our control: before each case "
                "the program waits up to --wait-quiet s for them to idle, and the 'others' column gives the cores they "
                "kept busy during the case).\n",
                cfg.warmup, cfg.repeats, load0.c_str());
    std::printf("'op' = operation alone on prepared operands; 'setup' = from a dense host matrix: conversion + "
                "handles + workspace + transfers + op + result to host. Times in ms.\n\n");

    // ---- memory bandwidth ----
    if (run_cpu) {
      size_t bytes = size_t(stream_mb) << 20;
      if (ember::cli::flag<double>(args, "wait-quiet", 0, 3600) > 0) wait_quiet(ember::cli::flag<double>(args, "wait-quiet", 0, 3600));
      CpuSample q0 = cpu_sample();
      const ember::bench::Bandwidth probe = ember::bench::measure_bandwidth(bytes, default_threads, 10);
      double others = others_cores(q0, cpu_sample());
      const double best = probe.copy_gbs();
      result["stream"] = ember::bench::to_json(probe);
      result["stream"]["others_cores"] = others;
      std::printf("%s;\n%%copy below uses %.1f GB/s (other processes used %.2f cores meanwhile)\n\n",
                  ember::bench::describe(probe).c_str(), best, others);
    }

    // ---- the cases ----
    struct Case {
      std::string op;
      int64_t n;
      double d;
    };
    std::vector<Case> cases;
    for (double n : spmv_sizes)
      for (double d : densities) cases.push_back({"spmv", int64_t(n), d});
    if (large_n > 0)
      for (double d : large_d) cases.push_back({"spmv", large_n, d});
    for (double n : spgemm_sizes)
      for (double d : densities) cases.push_back({"spgemm", int64_t(n), d});

    PeerCases peer(args["work-dir"].as<std::string>());
    peer.python = python;
    peer.script = args["peer-script"].as<std::string>();
    peer.cfg = cfg;
    peer.blas_threads = default_threads;
    peer.keep_files = args["keep-files"].as<bool>();
    // Merges the peer's results for one case into its row, checking that it computed the same.
    auto merge_peer = [&](json& r, const json& p, bool spmv_op) {
      r["scipy_ms"] = p["op_ms"];
      r["scipy_min_ms"] = p["op_min_ms"];
      if (p.contains("setup_ms")) r["scipy_setup_ms"] = p["setup_ms"];
      if (p.contains("dense_ms")) r["numpy_dense_ms"] = p["dense_ms"];
      if (spmv_op) {
        double sy = p["sum"].get<double>(), e = r.value("ember_sum", sy);
        r["scipy_sum"] = sy;
        EMBER_CHECK(std::abs(sy - e) <= 1e-3 * (std::abs(e) + 1.0), "bench_sparse: SciPy's sum(y) ", sy,
                    " differs from Ember's ", e, " in ", r["id"]);
      } else {
        r["scipy_c_nnz"] = p["c_nnz"];
        EMBER_CHECK(p["c_nnz"] == r["c_nnz"], "bench_sparse: SciPy's C has ", p["c_nnz"], " nonzeros, Ember's ",
                    r["c_nnz"], " in ", r["id"]);
        r["scipy_c_sorted"] = p["c_sorted_by_scipy"];
      }
    };
    std::vector<json> spmv_rows, spgemm_rows;
    std::map<int64_t, Timing> dense_gemm;
    ember::examples::ProgressBar progress("cases", int64_t(cases.size()), true, stderr, "cases");
    for (const Case& c : cases) {
      std::string id = c.op + "_n" + std::to_string(c.n) + "_d" + density_id(c.d);
      progress.step(id);
      double k = c.d * double(c.n);  // nonzeros per row
      json row{{"n", c.n}, {"density", c.d}, {"id", id}};
      double quiet_s = ember::cli::flag<double>(args, "wait-quiet", 0, 3600);
      if (quiet_s > 0) row["others_cores_before"] = wait_quiet(quiet_s);
      CpuSample s0 = cpu_sample();
      if (c.op == "spgemm" && double(c.n) * k * k > cfg.max_products) {
        row["skipped"] = "more than --max-products multiply-adds";
        spgemm_rows.push_back(row);
        continue;
      }
      uint64_t seed = uint64_t(c.n) * 1000003u + uint64_t(std::llround(c.d * 1e9));
      CsrTensor a = random_csr(c.n, c.d, seed);
      row["nnz"] = a.nnz();
      row["actual_density"] = a.density();
      bool has_dense = double(c.n) * double(c.n) * 4.0 <= double(cfg.max_dense_bytes);
      Tensor dense = has_dense ? a.to_dense() : Tensor();
      if (c.op == "spmv") {
        Generator g(seed + 1);
        Tensor x = uniform({c.n}, -1.0, 1.0, DType::Float32, &g);
        row["model_bytes"] = spmv_model_bytes(c.n, a.nnz());
        row["bytes_per_nnz"] = a.nnz() ? spmv_model_bytes(c.n, a.nnz()) / double(a.nnz()) : 0.0;
        Tensor y = spmv(a, x);
        if (run_cpu) cpu_spmv_case(a, x, dense, cfg, row);
        if (run_gpu) gpu_spmv_case(a, x, dense, y, cfg, row);
        if (run_scipy) merge_peer(row, peer.run_case(id, "spmv", a, x, has_dense, has_dense), true);
        row["others_cores"] = others_cores(s0, cpu_sample());
        spmv_rows.push_back(row);
      } else {
        CsrTensor cc = spgemm(a, a);
        if (run_cpu) cpu_spgemm_case(a, dense, cfg, dense_gemm, row);
        if (run_gpu) gpu_spgemm_case(a, dense, cc, cfg, row);
        if (run_scipy)
          merge_peer(row, peer.run_case(id, "spgemm", a, Tensor(), has_dense, has_dense && c.n <= cfg.max_dense_gemm_n),
                     false);
        row["others_cores"] = others_cores(s0, cpu_sample());
        spgemm_rows.push_back(row);
      }
      allocator(Device::CPU).empty_cache();  // cached blocks of this case's sizes would only pin memory
    }
    progress.finish();

    if (run_scipy) {
      result["scipy"] = {{"versions", peer.version_info}, {"sparse_threads", 1}, {"blas_threads", default_threads}};
      std::printf("Peer: %s, run on the same matrix files right after Ember's timings of each case; results checked "
                  "against Ember's (sum of y; nonzeros of C). SciPy's sparse products are single-threaded; NumPy's "
                  "dense products use %d OpenBLAS threads.\n\n",
                  peer.version_info.c_str(), default_threads);
    }
    if (!run_scipy) {
      result["scipy"] = {{"not_measured", scipy_note}};
      std::printf("SciPy: not measured (%s)\n\n", scipy_note.c_str());
    }

    // ---- derived: bandwidth, tables ----
    double copy_bw = result.contains("stream") ? result["stream"]["copy_gbs"].get<double>() : 0;
    double read_bw = result.contains("stream") ? result["stream"]["read_gbs"].get<double>() : 0;
    for (json& r : spmv_rows)
      if (r.contains(main_t + "_ms")) {
        r["ember_gbs"] = r["model_bytes"].get<double>() / (r[main_t + "_ms"].get<double>() * 1e6);
        if (copy_bw > 0) r["ember_pct_copy"] = 100.0 * r["ember_gbs"].get<double>() / copy_bw;
        // SpMV and the dense GEMV baseline mostly read (values, indices, x; the matrix): the read
        // figure is their ceiling. The dense product reads n^2 floats.
        if (read_bw > 0) {
          r["ember_pct_read"] = 100.0 * r["ember_gbs"].get<double>() / read_bw;
          if (r.contains("dense_ms")) {
            const double n = double(r["n"].get<int64_t>());
            r["dense_pct_read"] = ember::bench::percent_of(4.0 * n * n, r["dense_ms"].get<double>() * 1e-3, read_bw);
          }
        }
      }

    std::string t1 = key("ember", 1);
    auto print_cpu = [&](const char* title, std::vector<json>& rows, bool spmv_op) {
      std::printf("%s (CPU; Ember at %d threads unless marked 1t; SciPy single-threaded; dense E = Ember's matmul, "
                  "dense NP = NumPy/OpenBLAS; others = cores used by other processes)\n",
                  title, default_threads);
      std::printf("%8s %8s %10s %7s | %9s %9s %6s %5s | %9s %7s | %9s %9s | %9s %9s | %6s\n", "n", "density", "nnz",
                  spmv_op ? "B/nnz" : "mul-add", "Ember 1t", "Ember", spmv_op ? "GB/s" : "", spmv_op ? "%copy" : "",
                  "SciPy", "SciPy/E", "dense E", "dense NP", "E+setup", "SciPy+set", "others");
      for (json& r : rows) {
        if (r.contains("skipped")) {
          std::printf("%8lld %8s  skipped: %s\n", (long long)r["n"].get<int64_t>(), density_id(r["density"].get<double>()).c_str(),
                      r["skipped"].get<std::string>().c_str());
          continue;
        }
        std::string work = spmv_op ? fmt(r, "bytes_per_nnz", "%.1f") : fmt(r, "products", "%.2g");
        std::printf("%8lld %8s %10lld %7s | %9s %9s %6s %5s | %9s %7s | %9s %9s | %9s %9s | %6s\n",
                    (long long)r["n"].get<int64_t>(), density_id(r["density"].get<double>()).c_str(),
                    (long long)r["nnz"].get<int64_t>(), work.c_str(), fmt(r, t1 + "_ms").c_str(),
                    fmt(r, main_t + "_ms").c_str(), spmv_op ? fmt(r, "ember_gbs", "%.1f").c_str() : "",
                    spmv_op ? fmt(r, "ember_pct_copy", "%.0f").c_str() : "", fmt(r, "scipy_ms").c_str(),
                    ratio(r, "scipy_ms", main_t + "_ms").c_str(), fmt(r, "dense_ms").c_str(),
                    fmt(r, "numpy_dense_ms").c_str(), fmt(r, main_setup + "_ms").c_str(),
                    fmt(r, "scipy_setup_ms").c_str(), fmt(r, "others_cores", "%.2f").c_str());
      }
      std::printf("\n");
    };
    auto print_gpu = [&](const char* title, std::vector<json>& rows) {
      std::printf("%s (GPU: %s)\n", title, result["machine"]["gpu"].get<std::string>().c_str());
      std::printf("%8s %8s %10s | %10s %12s | %10s %12s | %10s\n", "n", "density", "nnz", "cuSPARSE", "cuSP+setup",
                  "cuBLAS", "cuBLAS+set", "CPU E/cuSP");
      for (json& r : rows) {
        if (r.contains("skipped")) continue;
        std::printf("%8lld %8s %10lld | %10s %12s | %10s %12s | %10s\n", (long long)r["n"].get<int64_t>(),
                    density_id(r["density"].get<double>()).c_str(), (long long)r["nnz"].get<int64_t>(),
                    fmt(r, "cusparse_ms").c_str(), fmt(r, "cusparse_setup_ms").c_str(), fmt(r, "cublas_ms").c_str(),
                    fmt(r, "cublas_setup_ms").c_str(), ratio(r, main_t + "_ms", "cusparse_ms").c_str());
      }
      std::printf("\n");
    };
    if (run_cpu) {
      print_cpu("SpMV y = A x", spmv_rows, true);
      print_cpu("SpGEMM C = A A", spgemm_rows, false);
    }
    if (run_gpu) {
      print_gpu("SpMV y = A x", spmv_rows);
      print_gpu("SpGEMM C = A A", spgemm_rows);
    } else {
      std::printf("GPU: not measured (%s)\n\n", device == "cpu" ? "--device cpu" : why.c_str());
    }

    // ---- crossovers ----
    json cross = json::array();
    auto add_cross = [&](const char* op, std::vector<json>& rows, const std::vector<double>& sizes, const char* what,
                         const std::string& sk, const std::string& dk) {
      for (double n : sizes) {
        json c = crossover(rows, int64_t(n), sk, dk);
        c["op"] = op;
        c["what"] = what;
        if (c["result"] != "not measured") cross.push_back(c);
      }
    };
    for (auto [op, rows, sizes] : {std::tuple<const char*, std::vector<json>*, std::vector<double>*>{"spmv", &spmv_rows, &spmv_sizes},
                                   {"spgemm", &spgemm_rows, &spgemm_sizes}}) {
      add_cross(op, *rows, *sizes, "CPU op: dense (Ember matmul) vs Ember sparse", main_t + "_ms", "dense_ms");
      add_cross(op, *rows, *sizes, "CPU with setup: dense vs Ember dense->CSR + sparse", main_setup + "_ms", "dense_ms");
      add_cross(op, *rows, *sizes, "CPU op: NumPy dense (OpenBLAS) vs Ember sparse", main_t + "_ms", "numpy_dense_ms");
      add_cross(op, *rows, *sizes, "CPU op: NumPy dense (OpenBLAS) vs SciPy sparse", "scipy_ms", "numpy_dense_ms");
      add_cross(op, *rows, *sizes, "GPU op: cuBLAS vs cuSPARSE", "cusparse_ms", "cublas_ms");
      add_cross(op, *rows, *sizes, "GPU with setup: cuBLAS vs cuSPARSE", "cusparse_setup_ms", "cublas_setup_ms");
      add_cross(op, *rows, *sizes, "with setup: GPU (cuSPARSE) vs CPU (Ember sparse)", main_setup + "_ms", "cusparse_setup_ms");
      add_cross(op, *rows, *sizes, "op: GPU (cuSPARSE) vs CPU (Ember sparse)", main_t + "_ms", "cusparse_ms");
    }
    std::printf("Crossovers (the second-named wins from the density given):\n");
    for (const json& c : cross)
      std::printf("  %-6s n=%-6lld %-52s %s\n", c["op"].get<std::string>().c_str(), (long long)c["n"].get<int64_t>(),
                  c["what"].get<std::string>().c_str(), c["result"].get<std::string>().c_str());
    std::printf("\n");

    // ---- phase profile of one case ----
    {
      uint64_t seed = uint64_t(profile_n) * 7919u + 17u;
      CsrTensor a = random_csr(profile_n, profile_d, seed);
      Tensor dense = a.to_dense();
      Generator g(seed + 1);
      Tensor x = uniform({profile_n}, -1.0, 1.0, DType::Float32, &g);
      json prof{{"n", profile_n}, {"density", profile_d}, {"nnz", a.nnz()}};
      if (run_cpu) prof["cpu"] = cpu_profile(a, dense, x, cfg);
      if (run_gpu) prof["gpu"] = gpu_profile(a, dense, x, cfg);
      result["profile"] = prof;
      for (const char* dev : {"cpu", "gpu"}) {
        if (!prof.contains(dev)) continue;
        for (const char* op : {"spmv", "spgemm"}) {
          std::printf("Profile, %s %s with setup, n=%lld density=%s nnz=%lld (median ms per phase):\n", dev, op,
                      (long long)profile_n, density_id(profile_d).c_str(), (long long)a.nnz());
          double total = 0;
          for (const json& p : prof[dev][op])
            if (p["phase"].get<std::string>().rfind("  of which", 0) != 0) total += p["ms"].get<double>();
          for (const json& p : prof[dev][op])
            std::printf("  %-60s %10.4f  %5.1f%%\n", p["phase"].get<std::string>().c_str(), p["ms"].get<double>(),
                        100.0 * p["ms"].get<double>() / std::max(total, 1e-12));
        }
      }
      if (!run_gpu) std::printf("Profile, gpu: not measured\n");
      std::printf("\n");
    }

    std::string load1 = ember::bench::load_average();
    std::printf("Load average after: %s\n", load1.c_str());
    result["hygiene"] = {{"warmup", cfg.warmup},
                         {"repeats", cfg.repeats},
                         {"statistic", "median per call"},
                         {"cpu_batches", "each sample a batch of calls lasting >= 2 ms"},
                         {"gpu_op_timing", "CUDA events, one call per sample, operands resident"},
                         {"setup_timing", "host clock, synchronised"},
                         {"load_before", load0},
                         {"load_after", load1}};
    result["spmv"] = spmv_rows;
    result["spgemm"] = spgemm_rows;
    result["crossovers"] = cross;
    result["threads"] = cfg.threads;
    if (args.count("json")) {
      ember::bench::write_json(args["json"].as<std::string>(), result, 1);
      std::printf("wrote %s\n", args["json"].as<std::string>().c_str());
    }
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "bench_sparse: " << e.what() << "\n" << opts.help() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "\n" << e.what() << "\n";
    return 1;
  }
  return 0;
}
