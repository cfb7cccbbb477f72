// bench_gemv: every matrix-vector shape on matmul's GEMV path, with the matrix read from DRAM,
// against the memory bandwidth this machine measures and against MKL (torch's) in turns in the
// same process.
//
// A matrix-vector product reads its matrix once and does two flops per 4 bytes read, so its limit is
// the memory's read bandwidth, not the FMA units: the figure that matters is the share of the
// measured read bandwidth it reaches (issue 18 asks for 80%). The matrix must come from DRAM, as in
// a GPT-2 decode step (498 MB of weights per token): each run cycles through enough copies of W
// (--cold-mb, several times the last-level cache) that no product finds its matrix in cache. The
// floor is measured in the same turns over the same copies (the read probe of bandwidth.h), so that
// a slow phase of a shared machine lowers both sides of the ratio alike.
//
//   bench_gemv                                  GPT-2's weights, square and awkward matrices, 1 and
//                                               all threads, the four layouts (gemv_cases.h)
//   bench_gemv --matrices 8192x8192 --layouts Wv --threads 2 --json out.json
//   bench_gemv --cases xW:768x3072,xWt:50257x768          chosen layout:matrix pairs
#include <algorithm>
#include <cmath>
#include <cxxopts.hpp>
#include <iostream>

#include "ember.h"
#include "examples/common/bandwidth.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "examples/common/peer_python.h"
#include "examples/common/progress_bar.h"
#include "examples/matmul/gemv_cases.h"
#include "examples/matmul/mkl_peer.h"
#include "framework/core/parallel.h"

using namespace ember;
using namespace ember::matmul_bench;

namespace {

// The largest error of `got` against W's product with v in float64, relative to sum |w||v| per output.
double rel_err(const GemvCase& c, const float* w, const float* v, const float* got) {
  double worst = 0;
  const bool row = c.layout == GemvLayout::XW || c.layout == GemvLayout::Wtv;  // out[j] = sum_i v[i] W[i, j]
  for (int64_t o = 0; o < c.out_len(); ++o) {
    double ref = 0, scale = 0;
    for (int64_t i = 0; i < c.in_len(); ++i) {
      const double x = double(v[i]) * double(row ? w[i * c.cols + o] : w[o * c.cols + i]);
      ref += x, scale += std::abs(x);
    }
    worst = std::max(worst, std::abs(double(got[o]) - ref) / std::max(scale, 1e-30));
  }
  return worst;
}

// Which of the two GEMV kernels the layout reaches (ops/matmul/cpu/gemv.cpp): W's rows as axpy
// streams, or W's rows as dot products.
const char* kernel_of(GemvLayout l) { return l == GemvLayout::XW || l == GemvLayout::Wtv ? "rows" : "dots"; }

// The read probe's patterns: rows of 8 KiB read side by side (1: one sequential stream per thread).
constexpr int kProbeRows[] = {1, 4, 8};

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_gemv",
                           "Matrix-vector products on matmul's GEMV path, the matrix read from DRAM: GB/s, share of "
                           "the measured read bandwidth, and MKL's sgemv and sgemm (torch's kernels) in turns");
  options.add_options()
      ("matrices", "stored matrices W as ROWSxCOLS, comma-separated (GPT-2's four weights and its LM head, two "
                   "squares, one awkward)",
       cxxopts::value<std::string>()->default_value("768x2304,768x768,768x3072,3072x768,50257x768,4096x4096,8192x8192,1000x3001"))
      ("layouts", "xW (x @ W), xWt (x @ W^T), Wv (W @ v), Wtv (W^T @ v), comma-separated, or all",
       cxxopts::value<std::string>()->default_value("all"))
      ("cases", "chosen LAYOUT:ROWSxCOLS pairs instead of every layout on every matrix, comma-separated "
                "(e.g. xW:768x3072,xWt:50257x768)", cxxopts::value<std::string>()->default_value(""))
      ("threads", "thread counts, comma-separated (default: 1 and all cores)", cxxopts::value<std::string>()->default_value(""))
      ("cold-mb", "MB of copies of W each timed run cycles through, so that W comes from DRAM",
       cxxopts::value<int64_t>()->default_value("512"))
      ("warmup", "untimed runs through the copies", cxxopts::value<int>()->default_value("1"))
      ("repeats", "timed runs through the copies (median reported)", cxxopts::value<int>()->default_value("7"))
      ("peer", "mkl (torch's MKL, in the same process) or none", cxxopts::value<std::string>()->default_value("mkl"))
      ("python", "the Python whose torch provides MKL", cxxopts::value<std::string>()->default_value(bench::peer::default_python()))
      ("json", "write the results to this JSON file", cxxopts::value<std::string>())
      ("h,help", "show this help");
  try {
    auto args = cli::parse(options, argc, argv);
    if (args.count("help")) {
      std::cout << options.help() << std::endl;
      return 0;
    }
    const std::string json_path = args.count("json") ? cli::output_path("--json", args["json"].as<std::string>()) : "";
    GemvPlan plan;
    if (!args["cases"].as<std::string>().empty()) {
      plan = parse_gemv_cases(args["cases"].as<std::string>());
    } else {
      std::vector<std::pair<int64_t, int64_t>> matrices;
      for (const std::string& m : cli::split_commas(args["matrices"].as<std::string>())) matrices.push_back(parse_gemv_matrix(m));
      EMBER_CHECK(!matrices.empty(), "--matrices: no matrix given (expected ROWSxCOLS, e.g. 768x2304)");
      plan = gemv_plan(matrices, parse_gemv_layouts(args["layouts"].as<std::string>()));
    }
    int64_t cases = 0;
    for (const auto& p : plan) cases += int64_t(p.second.size());
    std::vector<int64_t> threads = cli::int_list(args["threads"].as<std::string>(), "--threads", "thread counts such as 1,2");
    const int cores = num_threads();
    if (threads.empty()) threads = cores > 1 ? std::vector<int64_t>{1, cores} : std::vector<int64_t>{1};
    for (int64_t t : threads) cli::in_range<int64_t>("--threads", t, 1, cli::kMaxThreads);
    const double cold_bytes = double(cli::flag<int64_t>(args, "cold-mb", 1, 1 << 20)) * 1e6;
    bench::Options timing;
    timing.warmup = cli::flag<int>(args, "warmup", 0, 1000);
    timing.repeats = cli::flag<int>(args, "repeats", 1, 1000);
    timing.min_repeats = std::min(3, timing.repeats);
    timing.max_seconds = 30;
    const std::string peer = args["peer"].as<std::string>();
    EMBER_CHECK(peer == "mkl" || peer == "none", "--peer: expected mkl or none, got '", peer, "'");

    const bench::CpuInfo cpu = bench::cpu_info();
    std::cout << "cpu: " << cpu.model << " (" << cpu.logical_cpus << " logical CPUs)\n";
    nlohmann::json out = {{"program", "bench_gemv"}, {"cpu", cpu.model}, {"cold_bytes", cold_bytes}};
    bool use_mkl = false;
    if (peer == "mkl") {
      const MklPeer& mkl = mkl_from_python(args["python"].as<std::string>());
      use_mkl = mkl.ok();
      std::cout << "peer: " << (use_mkl ? "MKL " + mkl.version + " from " + mkl.library : "none (" + mkl.error + ")") << "\n";
      out["mkl"] = use_mkl ? nlohmann::json{{"library", mkl.library}, {"version", mkl.version}}
                           : nlohmann::json{{"error", mkl.error}};
    }
    // The floor per thread count: the read probe at that team size (and at one thread, the better counts).
    std::map<int64_t, bench::Bandwidth> floor;
    for (int64_t t : threads) {
      floor[t] = bench::measure_bandwidth(size_t(256) << 20, int(t));
      std::cout << bench::describe(floor[t]) << "\n";
      out["bandwidth"][std::to_string(t)] = bench::to_json(floor[t]);
    }
    std::cout << "\nEach product reads W once (4 bytes per entry); GB/s = W's bytes / median time per product; "
                 "read GB/s = the read probe's best pattern summing the same copies on the same threads, in turns "
                 "with the products; % read = Ember's GB/s over it.\n"
                 "MKL: sgemv (torch.mv) and sgemm (torch.mm, nn.Linear), timed in turns with Ember; ratio = MKL's "
                 "better time / Ember's (above 1: Ember faster).\n\n";
    std::printf("%-7s %-7s %-16s %8s %7s %10s %8s %9s %7s %11s %11s %7s\n", "threads", "kernel", "case", "MB", "copies",
                "Ember us", "GB/s", "read GB/s", "% read", "sgemv us", "sgemm us", "ratio");
    out["results"] = nlohmann::json::array();
    examples::ProgressBar progress("gemv", cases * int64_t(threads.size()), true, stderr, "cases");
    Generator gen(7);
    for (const auto& [matrix, layouts] : plan) {
      const auto [rows, cols] = matrix;
      // The copies of W: one drawn at random, the others its clones, each its own allocation.
      const GemvCase probe{GemvLayout::XW, rows, cols};
      const int64_t copies = gemv_copies(probe.matrix_bytes(), cold_bytes);
      std::vector<Tensor> ws{normal({rows, cols}, 0, 1, DType::Float32, &gen)};
      for (int64_t i = 1; i < copies; ++i) ws.push_back(ws[0].clone());
      for (int64_t t : threads) {
        set_num_threads(int(t));
        if (use_mkl) mkl_set_threads(int(t));
        for (GemvLayout layout : layouts) {
          const GemvCase c{layout, rows, cols};
          Tensor v = normal({c.in_len()}, 0, 1, DType::Float32, &gen);
          std::vector<float> mkl_out(size_t(c.out_len()));
          autograd::NoGradGuard no_grad;
          // Correct first: each side's product on the first copy against float64.
          const float* w0 = ws[0].data<float>();
          const double err = rel_err(c, w0, v.data<float>(), gemv_product(c, ws[0], v).contiguous().data<float>());
          EMBER_CHECK(err < 1e-5, "bench_gemv: Ember's ", c.label(), " is off by ", err, " (relative) against float64");
          std::vector<std::function<void()>> runs = {[&] {
            for (const Tensor& w : ws) gemv_product(c, w, v);
          }};
          // The floor in the same turns, over the same copies: the read probe's three patterns (one
          // stream per thread, four and eight 8 KiB rows side by side) summing each copy of W on the
          // same threads; the best median counts. A slow phase of the VM then lowers the floor with
          // the kernels it slows, and the ratio stays a ratio of two reads of the same bytes.
          double sink = 0;
          const size_t first_probe = runs.size();
          for (int streams : kProbeRows)
            runs.push_back([&, streams] {
              for (const Tensor& w : ws) {
                double part[256] = {};
                bench::detail::split_over(int(t), w.numel(), [&](int64_t lo, int64_t hi, int slot) {
                  part[slot & 255] = bench::detail::sum_streams(w.data<float>() + lo, hi - lo, streams);
                });
                for (double x : part) sink += x;
              }
            });
          const size_t first_mkl = runs.size();
          double mkl_err = 0;
          if (use_mkl) {
            for (auto f : {mkl_gemv, mkl_gemm}) {
              std::fill(mkl_out.begin(), mkl_out.end(), 0.f);
              f(gemv_args(c, w0, v.data<float>(), mkl_out.data()));
              mkl_err = std::max(mkl_err, rel_err(c, w0, v.data<float>(), mkl_out.data()));
              EMBER_CHECK(mkl_err < 1e-5, "bench_gemv: MKL's ", c.label(), " is off by ", mkl_err,
                          " (relative) against float64: the peer is called wrongly");
              runs.push_back([&, f] {
                for (const Tensor& w : ws) f(gemv_args(c, w.data<float>(), v.data<float>(), mkl_out.data()));
              });
            }
          }
          const std::vector<bench::Timing> tm = bench::measure_interleaved(runs, timing);
          EMBER_CHECK(sink != 0, "bench_gemv: the read probe summed nothing");
          const double per = tm[0].median_s / double(copies);
          const double gbs = c.matrix_bytes() / per * 1e-9;
          double probe_s = 1e30;
          size_t best_probe = first_probe;
          for (size_t i = first_probe; i < first_mkl; ++i)
            if (tm[i].median_s / double(copies) < probe_s) probe_s = tm[i].median_s / double(copies), best_probe = i;
          const double probe_gbs = c.matrix_bytes() / probe_s * 1e-9;
          const double pct = 100.0 * probe_s / per;
          const double pct_global = bench::percent_of_read(c.matrix_bytes(), per, floor[t]);
          const double gemv_per = use_mkl ? tm[first_mkl].median_s / double(copies) : 0;
          const double gemm_per = use_mkl ? tm[first_mkl + 1].median_s / double(copies) : 0;
          const double ratio = use_mkl ? std::min(gemv_per, gemm_per) / per : 0;
          auto cell = [&](double x) { return use_mkl ? str(std::round(x * 10) / 10) : std::string("-"); };
          std::printf("%-7lld %-7s %-16s %8.1f %7lld %10.1f %8.1f %9.1f %7.0f %11s %11s %7s\n", (long long)t,
                      kernel_of(layout), c.label().c_str(), c.matrix_bytes() * 1e-6, (long long)copies, per * 1e6, gbs,
                      probe_gbs, pct,
                      cell(gemv_per * 1e6).c_str(), cell(gemm_per * 1e6).c_str(),
                      use_mkl ? (str(std::round(ratio * 100) / 100) + "x").c_str() : "-");
          std::fflush(stdout);
          nlohmann::json row = {{"layout", gemv_layout_name(layout)}, {"kernel", kernel_of(layout)}, {"rows", rows},
                                {"cols", cols}, {"threads", t}, {"copies", copies}, {"matrix_bytes", c.matrix_bytes()},
                                {"ember_s", per}, {"ember_gbs", gbs}, {"read_probe_gbs", probe_gbs},
                                {"percent_of_read", pct}, {"percent_of_global_probe", pct_global}, {"max_rel_err", err},
                                {"ember_timing", bench::to_json(tm[0])},
                                {"read_probe_rows_side_by_side", kProbeRows[best_probe - first_probe]},
                                {"read_probe_timing", bench::to_json(tm[best_probe])}};
          if (use_mkl)
            row.update({{"mkl_gemv_s", gemv_per}, {"mkl_gemm_s", gemm_per}, {"ratio_vs_best_mkl", ratio},
                        {"mkl_max_rel_err", mkl_err}, {"mkl_gemv_timing", bench::to_json(tm[first_mkl])},
                        {"mkl_gemm_timing", bench::to_json(tm[first_mkl + 1])}});
          out["results"].push_back(row);
          progress.step(c.label() + ", " + std::to_string(t) + " thread(s)");
        }
      }
    }
    progress.finish();
    // The goal in one line per thread count: the weakest cell and how many fall under 80% of the read.
    for (int64_t t : threads) {
      std::vector<double> pcts;
      std::string worst;
      for (const auto& r : out["results"])
        if (r["threads"] == t) {
          pcts.push_back(r["percent_of_read"].get<double>());
          if (pcts.back() <= *std::min_element(pcts.begin(), pcts.end()))
            worst = r["layout"].get<std::string>() + " " + std::to_string(r["rows"].get<int64_t>()) + "x" +
                    std::to_string(r["cols"].get<int64_t>());
        }
      if (pcts.empty()) continue;
      const int64_t under = std::count_if(pcts.begin(), pcts.end(), [](double p) { return p < 80; });
      std::printf("%lld thread(s): %zu cases, %.0f%% of the read probe at the median, the lowest %.0f%% (%s); %lld under 80%%\n",
                  (long long)t, pcts.size(), bench::median(pcts), *std::min_element(pcts.begin(), pcts.end()),
                  worst.c_str(), (long long)under);
    }
    if (!json_path.empty()) {
      bench::write_json(json_path, out);
      std::cout << "wrote " << json_path << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_gemv: " << e.what() << "\n";
    return 2;
  }
}
