// bench_ops: bandwidth of Ember's memory-bound ops (elementwise, reductions) against memcpy of
// the same bytes, on the same threads. An op's traffic is the bytes it must read plus the bytes it
// writes; memcpy of S bytes moves 2S. Both are reported in GB/s of that traffic.
//   bench_ops [--numel 1048576,16777216] [--json results.json]
//   bench_ops --list                 the op table: every primitive, its devices, rules and variants
//   bench_ops --op softmax,matmul    any primitive, timed on its op-table sample (--size N)
#include <algorithm>
#include <cstring>
#include <cxxopts.hpp>
#include <functional>
#include <iostream>

#include "examples/common/cli_flags.h"
#include "ember.h"
#include "examples/common/cli_lists.h"
#include "examples/common/bandwidth.h"
#include "examples/common/bench.h"
#include "examples/attention/study/study_kernels.h"
#include "examples/matmul/bench_ops_table.h"
#include "examples/matmul/study/study_kernels.h"
#include "framework/core/parallel.h"
#include "ops/loss/cpu/cross_entropy_kernels.h"
#include "ops/norm/cpu/layer_norm_kernels.h"
#include "ops/softmax/cpu/softmax_kernels.h"

using namespace ember;

namespace {

struct OpCase {
  std::string name;
  int reads, writes;  // in tensors of numel elements (a reduction writes ~nothing)
  std::function<Tensor()> run;
};

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_ops", "GB/s of Ember's elementwise ops and reductions against memcpy of the same bytes");
  options.add_options()
      ("numel", "tensor sizes in elements, comma-separated", cxxopts::value<std::string>()->default_value("1048576,16777216"))
      ("ops", "only these ops, comma-separated (default: all)", cxxopts::value<std::string>()->default_value(""))
      ("dtype", "float32 or float64", cxxopts::value<std::string>()->default_value("float32"))
      ("threads", "threads (0: all cores)", cxxopts::value<int>()->default_value("0"))
      ("warmup", "untimed runs", cxxopts::value<int>()->default_value("3"))
      ("repeats", "timed runs (median reported)", cxxopts::value<int>()->default_value("15"))
      ("wait-quiet", "before each measurement wait up to this many seconds for the CPUs to be 90% idle", cxxopts::value<double>()->default_value("0"))
      ("list", "print the op table (every primitive) and exit")
      ("op", "time these primitives from the op table instead, comma-separated (forward, and forward + VJP)",
       cxxopts::value<std::string>())
      ("size", "with --op: the sample's main dimension", cxxopts::value<int64_t>()->default_value("512"))
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
    // The table then lists the studies' variants too (matmul's naive, ikj, blocked; attention's
    // standard, flash).
    ember::matmul_study::register_matmul_study_kernels();
    ember::attention_study::register_attention_study_kernels();
    if (args.count("list")) {
      print_op_table(std::cout);
      return 0;
    }
    std::string dts = args["dtype"].as<std::string>();
    EMBER_CHECK(dts == "float32" || dts == "float64", "bench_ops: --dtype must be float32 or float64, got ", dts);
    DType dt = dts == "float32" ? DType::Float32 : DType::Float64;
    int threads = ember::cli::flag<int>(args, "threads", 0, ember::cli::kMaxThreads) > 0 ? ember::cli::flag<int>(args, "threads", 0, ember::cli::kMaxThreads) : num_threads();
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    const std::vector<std::string> only = cli::split_commas(args["ops"].as<std::string>());
    bench::Options timing;
    timing.warmup = ember::cli::flag<int>(args, "warmup", 0, 1000000);
    timing.repeats = ember::cli::flag<int>(args, "repeats", 1, 1000000);
    timing.min_repeats = std::min(3, timing.repeats);
    bench::CpuInfo cpu = bench::cpu_info();
    if (args.count("op")) {
      const int64_t size = ember::cli::flag<int64_t>(args, "size", 1, 16384);
      std::cout << "cpu: " << cpu.model << "\nthreads: " << threads << "\ndtype: " << dts << "\n\n"
                << "op                  sample                              forward ms  forward+vjp ms\n";
      nlohmann::json res = {{"program", "bench_ops --op"}, {"cpu", cpu.model}, {"threads", threads}, {"dtype", dts}};
      for (const std::string& op : cli::split_commas(args["op"].as<std::string>()))
        res["results"].push_back(bench_table_op(op, size, dt, timing));
      if (args.count("json")) bench::write_json(args["json"].as<std::string>(), res);
      return 0;
    }
    std::cout << "cpu: " << cpu.model << "\nthreads: " << threads << "\ndtype: " << dts << "\n"
              << "rows of 1024; softmax, log_softmax, layer_norm and cross_entropy are the fused forward kernels,\n"
              << "*_bwd their fused backward kernels (first-order gradients) called directly\n\n";

    // The machine's DRAM figure: at sizes beyond the caches an op's GB/s should approach it.
    const bench::Bandwidth bw = bench::measure_bandwidth(size_t(256) << 20, threads);
    std::cout << bench::describe(bw) << "\n\n";
    nlohmann::json out = {{"program", "bench_ops"}, {"cpu", cpu.model}, {"threads", threads}, {"dtype", dts},
                          {"bandwidth", bench::to_json(bw)}};
    out["results"] = nlohmann::json::array();
    std::cout << "op                           numel      MB moved   median ms      GB/s   % of memcpy  % of STREAM copy\n";
    for (int64_t n : cli::int_list(args["numel"].as<std::string>(), "--numel", "element counts such as 1048576")) {
      EMBER_CHECK(n >= 1024 && n % 1024 == 0, "--numel values must be positive multiples of 1024, got ", n);
      Generator gen(1);
      Tensor x = normal({n / 1024, 1024}, 0, 1, dt, &gen), y = normal({n / 1024, 1024}, 0, 1, dt, &gen);
      Tensor w = normal({1024}, 1, 0.1, dt, &gen), b = normal({1024}, 0, 0.1, dt, &gen);
      Tensor targets = randint({n / 1024}, 0, 1024, &gen);
      // What the backward kernels read: the forward outputs and saved row statistics.
      Tensor sm = softmax(x, -1), lsm = log_softmax(x, -1), ln_mean, ln_rstd;
      cpu::layer_norm(x, w, b, 1e-5, &ln_mean, &ln_rstd);
      size_t bytes = size_t(n) * itemsize(dt);

      // memcpy of one tensor's bytes, split over the same threads as the ops.
      std::vector<char> src(bytes, 1), dst(bytes, 0);
      auto copy = [&] {
        parallel_for(int64_t(bytes), 1 << 16, [&](int64_t b, int64_t e) { std::memcpy(&dst[size_t(b)], &src[size_t(b)], size_t(e - b)); });
      };
      double wait_quiet = ember::cli::flag<double>(args, "wait-quiet", 0, 3600);
      auto quiet = [&] { return wait_quiet > 0 ? bench::wait_for_quiet(wait_quiet) : -1.0; };
      double idle = quiet();
      bench::Timing tm = bench::measure(copy, timing);
      double memcpy_gbs = 2.0 * double(bytes) / tm.median_s * 1e-9;
      auto row = [&](const std::string& name, double traffic, const bench::Timing& t, double idle) {
        double gbs = traffic / t.median_s * 1e-9;
        std::cout << name << std::string(size_t(std::max(0, 26 - int(name.size()))), ' ') << bench::cell(double(n), 10, 0)
                  << bench::cell(traffic * 1e-6, 12, 1) << bench::cell(t.median_s * 1e3, 12, 3) << bench::cell(gbs, 10, 1)
                  << bench::cell(100 * gbs / memcpy_gbs, 13, 0)
                  << bench::cell(bench::percent_of_copy(traffic, t.median_s, bw), 18, 0) << "\n";
        out["results"].push_back({{"op", name}, {"numel", n}, {"bytes_moved", traffic}, {"gbps", gbs},
                                  {"fraction_of_memcpy", gbs / memcpy_gbs},
                                  {"percent_of_stream_copy", bench::percent_of_copy(traffic, t.median_s, bw)},
                                  {"timing", bench::to_json(t)},
                                  {"idle_before", idle}});
      };
      row("memcpy", 2.0 * double(bytes), tm, idle);

      std::vector<OpCase> ops = {
          {"add", 2, 1, [&] { return x + y; }},
          {"mul", 2, 1, [&] { return x * y; }},
          {"relu", 1, 1, [&] { return relu(x); }},
          {"exp", 1, 1, [&] { return exp(x); }},
          {"gelu", 1, 1, [&] { return gelu(x); }},
          {"gelu_tanh", 1, 1, [&] { return gelu(x, true); }},
          {"sum_all", 1, 0, [&] { return sum(x); }},
          {"sum_rows", 1, 0, [&] { return sum(x, {1}); }},
          {"sum_cols", 1, 0, [&] { return sum(x, {0}); }},
          {"softmax", 1, 1, [&] { return softmax(x, -1); }},
          {"log_softmax", 1, 1, [&] { return log_softmax(x, -1); }},
          {"layer_norm", 1, 1, [&] { return layer_norm(x, w, b); }},
          {"cross_entropy", 1, 0, [&] { return cross_entropy(x, targets); }},
          {"softmax_bwd", 2, 1, [&] { return cpu::softmax_backward(sm, y, 1); }},
          {"log_softmax_bwd", 2, 1, [&] { return cpu::log_softmax_backward(lsm, y, 1); }},
          {"layer_norm_bwd_dx", 2, 1, [&] { return cpu::layer_norm_backward_input(x, ln_mean, ln_rstd, w, y); }},
          {"layer_norm_bwd_dw", 2, 0, [&] { return cpu::layer_norm_backward_weight(x, ln_mean, ln_rstd, y); }},
          {"cross_entropy_bwd", 1, 1, [&] { return cpu::cross_entropy_backward(x, targets, 1.0 / double(n / 1024)); }},
          // The same rules as chains of Ember ops (what grad of grad records, and what first-order
          // gradients ran before the fused kernels); traffic counted as for the fused kernel.
          {"softmax_bwd_unfused", 2, 1, [&] { return sm * (y - sum(y * sm, {1}, true)); }},
          {"layer_norm_bwd_dx_unfused", 2, 1, [&] {
             Tensor xhat = (x - ln_mean) * ln_rstd, gw = y * w;
             return ln_rstd * (gw - mean(gw, {1}, true) - xhat * mean(gw * xhat, {1}, true));
           }},
          {"cross_entropy_bwd_unfused", 1, 1, [&] {
             return (softmax(x, -1) - cpu::one_hot(targets, 1024, x.dtype())) / double(n / 1024);
           }},
      };
      for (const OpCase& op : ops) {
        if (!only.empty() && std::find(only.begin(), only.end(), op.name) == only.end()) continue;
        double idle_op = quiet();
        bench::Timing t = bench::measure([&] { op.run(); }, timing);
        row(op.name, double(op.reads + op.writes) * double(bytes), t, idle_op);
      }
      std::cout << "\n";
    }
    if (args.count("json")) {
      bench::write_json(args["json"].as<std::string>(), out);
      std::cout << "wrote " << args["json"].as<std::string>() << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
}
