// The kernels of y = x W^T alone, at GPT-2 124M's five weight shapes, with W in float32 (the
// library's GEMV or GEMM), bfloat16 and int8, timed in turns. One row of x (decode: both int8
// kernels) or --rows rows (prefill: the widening tile kernel). Each timed run walks through enough
// copies of W to pass the last-level cache, so every byte of W comes from memory, as in a forward
// pass; the figures are W's bytes per second beside the machine's read bandwidth, and GFLOP/s.
//
//   build/bin/bench_quant_kernels --threads 1 --rounds 9 [--rows 128] [--json out.json]
//
// Each kernel is checked against the float64 product first.
#include <cxxopts.hpp>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "examples/common/bandwidth.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "framework/core/parallel.h"
#include "framework/core/random.h"
#include "ops/linear/linear.h"
#include "ops/quant/quant_linear.h"

using namespace ember;

namespace {

struct Shape {
  const char* name;
  int64_t rows, cols;  // W: (out, in)
};
constexpr Shape kShapes[] = {{"attn.c_attn", 2304, 768},
                             {"attn.c_proj", 768, 768},
                             {"mlp.c_fc", 3072, 768},
                             {"mlp.c_proj", 768, 3072},
                             {"lm_head", 50257, 768}};

struct Variant {
  const char* name;
  quant::WeightFormat format;
  quant::QuantKernel kernel;  // unused for float32
};
const std::vector<Variant> kDecode = {{"f32 gemv", quant::WeightFormat::Float32, quant::QuantKernel::Auto},
                                      {"bf16 widen", quant::WeightFormat::BFloat16, quant::QuantKernel::Avx2FewRows},
                                      {"int8 widen", quant::WeightFormat::Int8Block32, quant::QuantKernel::Avx2FewRows},
                                      {"int8 dots", quant::WeightFormat::Int8Block32, quant::QuantKernel::Avx2IntDots}};
const std::vector<Variant> kPrefill = {{"f32 gemm", quant::WeightFormat::Float32, quant::QuantKernel::Auto},
                                       {"bf16 tiles", quant::WeightFormat::BFloat16, quant::QuantKernel::Avx2Tiles},
                                       {"int8 tiles", quant::WeightFormat::Int8Block32, quant::QuantKernel::Avx2Tiles}};

// Copies of one W in a format, together at least `min_bytes`, and a run that multiplies x by each.
struct Copies {
  std::vector<Tensor> f32;
  std::vector<quant::QuantizedMatrix> q;
  int64_t bytes_each = 0;
};

Copies make_copies(const Tensor& w, quant::WeightFormat f, int64_t min_bytes) {
  Copies c;
  if (f == quant::WeightFormat::Float32) {
    c.bytes_each = w.numel() * 4;
    for (int64_t b = 0; b < min_bytes; b += c.bytes_each) c.f32.push_back(w.clone());
  } else {
    quant::QuantizedMatrix q = quantize(w, f);
    c.bytes_each = q.bytes();
    for (int64_t b = 0; b < min_bytes; b += c.bytes_each) c.q.push_back(q);
  }
  return c;
}

// A kernel is timed only once its product matches the float64 one with the weights it stores,
// within what float32 sums (and, for the integer dots, x's rounding to int8 per block) allow.
void check(const Tensor& x, const Copies& c, const Variant& v, const Shape& s) {
  const Tensor y = c.f32.empty() ? quant::quant_linear(x, c.q[0], Tensor(), v.kernel) : linear(x, c.f32[0]);
  const Tensor wd = c.f32.empty() ? quant::dequantize(c.q[0]) : c.f32[0];
  const std::vector<double> xv = x.to_vector<double>(), wv = wd.to_vector<double>(), yv = y.to_vector<double>();
  const int64_t m = x.size(0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < s.rows; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < s.cols; ++k) {
        ref += xv[size_t(i * s.cols + k)] * wv[size_t(j * s.cols + k)];
        mag += std::fabs(xv[size_t(i * s.cols + k)] * wv[size_t(j * s.cols + k)]);
      }
      const double tol = (v.kernel == quant::QuantKernel::Avx2IntDots ? 1e-2 : 1e-4) * mag + 1e-6;
      const double got = yv[size_t(i * s.rows + j)];
      EMBER_CHECK(std::fabs(got - ref) <= tol, "bench_quant_kernels: ", v.name, " at ", s.name, " gives ", got,
                  " for output (", i, ", ", j, ") where float64 gives ", ref, " (tolerance ", tol, ")");
    }
}

int run(int argc, char** argv) {
  cxxopts::Options o("bench_quant_kernels",
                     "The products x W^T of a GPT-2 forward alone, by weight format and kernel, at GPT-2 124M's "
                     "shapes: one row of x (decode) or --rows rows (prefill); W's bytes read per second (W always "
                     "from memory) and GFLOP/s, timed in turns, medians over rounds.");
  o.add_options()("threads", "CPU threads", cxxopts::value<int64_t>()->default_value("1"))(
      "rounds", "timed rounds (each runs every variant once, in turns)", cxxopts::value<int64_t>()->default_value("9"))(
      "rows", "rows of x: 1 to 3 time the decode kernels, more the prefill ones",
      cxxopts::value<int64_t>()->default_value("1"))(
      "check-only", "odd small shapes and a few copies: check every kernel against float64 and exit (a test)")(
      "json", "write the results as JSON", cxxopts::value<std::string>()->default_value(""))("h,help", "show this help");
  auto a = cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::printf("%s\n", o.help().c_str());
    return 0;
  }
  const int threads = int(cli::flag<int64_t>(a, "threads", 1, cli::kMaxThreads));
  const int rounds = int(cli::flag<int64_t>(a, "rounds", 1, 1000));
  const int64_t m = cli::flag<int64_t>(a, "rows", 1, 1 << 16);
  const std::string json_path = cli::output_path("--json", a["json"].as<std::string>());
  set_num_threads(threads);
  const std::vector<Variant>& variants = m <= 3 ? kDecode : kPrefill;
  for (const Variant& v : variants)
    if (v.format != quant::WeightFormat::Float32)
      EMBER_CHECK(quant::kernel_available(v.kernel, v.format), "bench_quant_kernels: kernel ",
                  quant::kernel_name(v.kernel), " does not run on this CPU");

  const bool check_only = a.count("check-only") > 0;
  const std::vector<Shape> shapes = check_only ? std::vector<Shape>{{"odd", 37, 53}, {"wide", 5, 1030}}
                                               : std::vector<Shape>(std::begin(kShapes), std::end(kShapes));
  const bench::Bandwidth bw = check_only ? bench::Bandwidth{} : bench::measure_bandwidth();
  if (!check_only) {
    std::printf("CPU: %s, %d thread(s); %s\n", bench::cpu_name().c_str(), threads, bench::describe(bw).c_str());
    std::printf("%lld row(s) of x\n%-12s %-11s %10s %8s %8s %8s\n", (long long)m, "shape", "kernel", "us", "GB/s",
                "% read", "GFLOP/s");
  }
  nlohmann::json rows = nlohmann::json::array();
  const int64_t min_bytes = check_only ? 1 : int64_t(256) << 20;  // far past any last-level cache here
  for (const Shape& s : shapes) {
    Tensor w = randn({s.rows, s.cols}), x = randn({m, s.cols});
    std::vector<Copies> copies;
    std::vector<std::function<void()>> runs;
    for (const Variant& v : variants) copies.push_back(make_copies(w, v.format, min_bytes));
    for (size_t i = 0; i < copies.size(); ++i) {
      const Copies& c = copies[i];
      const Variant& v = variants[i];
      runs.push_back([&c, &v, &x] {
        for (const Tensor& wf : c.f32) linear(x, wf);
        for (const quant::QuantizedMatrix& q : c.q) quant::quant_linear(x, q, Tensor(), v.kernel);
      });
    }
    for (size_t i = 0; i < copies.size(); ++i) check(x, copies[i], variants[i], s);
    if (check_only) continue;
    const std::vector<bench::Timing> ts = bench::measure_interleaved(runs, {2, rounds, rounds, 1e9});
    for (size_t i = 0; i < ts.size(); ++i) {
      const Copies& c = copies[i];
      const int64_t n = int64_t(c.f32.size() + c.q.size());
      const double us = ts[i].median_s / double(n) * 1e6, gbs = double(c.bytes_each) / (us * 1e-6) * 1e-9;
      const double gflops = 2.0 * double(m * s.rows * s.cols) / (us * 1e-6) * 1e-9;
      std::printf("%-12s %-11s %10.1f %8.2f %7.0f%% %8.1f\n", s.name, variants[i].name, us, gbs,
                  bench::percent_of_read(double(c.bytes_each), us * 1e-6, bw), gflops);
      rows.push_back({{"shape", s.name}, {"rows", s.rows}, {"cols", s.cols}, {"kernel", variants[i].name},
                      {"us", us}, {"gbs", gbs}, {"gflops", gflops}, {"bytes", c.bytes_each}});
    }
  }
  if (check_only)
    std::printf("bench_quant_kernels: %zu kernels match float64 on %zu shapes, %lld row(s), at %d thread(s)\n",
                variants.size(), shapes.size(), (long long)m, threads);
  if (!json_path.empty())
    bench::write_json(json_path, {{"cpu", bench::cpu_name()}, {"threads", threads}, {"rounds", rounds}, {"x_rows", m},
                                  {"bandwidth", bench::to_json(bw)}, {"rows", rows}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_quant_kernels: error: %s\n", e.what());
    return 1;
  }
}
