// contextual_sparsity head-speed: what computing only the kept attention heads buys in wall-clock
// time, for one generated token with a KV cache (the decode step, where Deja Vu's head sparsity
// applies). The kernel (models/sparsity/sparse_attention.h) projects only the kept heads' queries
// (and, by choice, keys and values), attends with those heads only and reads only their rows of
// c_proj; it is timed against the dense step with Ember's ops (matmul, attention op, matmul) and
// against itself with every head kept. Random weights and cache: the time depends on the shapes
// and k, not on the values.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>

#include "common.h"
#include "examples/attention/study/study_kernels.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "framework/core/autograd/trace.h"
#include "framework/core/parallel.h"
#include "models/sparsity/head_predictor.h"
#include "models/sparsity/sparse_attention.h"
#include "models/sparsity/topk.h"

namespace ember::study {
namespace {

double max_abs(const Tensor& a) {
  double m = 0;
  for (float v : a.to_vector<float>()) m = std::max(m, double(std::fabs(v)));
  return m;
}

}  // namespace

json head_speed_section(const HeadSpeedOptions& opt) {
  // The dense baseline is timed with the library's attention and with the study's Algorithm 0.
  attention_study::register_attention_study_kernels();
  autograd::NoGradGuard ng;
  const int saved_threads = num_threads();
  struct Restore {
    int n;
    ~Restore() { set_num_threads(n); }
  } restore{saved_threads};
  Generator gen(opt.seed);
  const int64_t C = opt.width, H = opt.heads, t = opt.cached;
  EMBER_CHECK(C % H == 0, "head-speed: width ", C, " is not a multiple of ", H, " heads");
  const int64_t hd = C / H;
  sparsity::AttentionWeights w;
  w.qkv_w = normal({C, 3 * C}, 0.0, 0.02, DType::Float32, &gen);
  w.qkv_b = normal({3 * C}, 0.0, 0.02, DType::Float32, &gen);
  w.proj_w = normal({C, C}, 0.0, 0.02, DType::Float32, &gen);
  w.proj_b = normal({C}, 0.0, 0.02, DType::Float32, &gen);
  w.n_head = H;
  sparsity::HeadSparseAttention kernel(w);
  sparsity::HeadPredictor predictor(C, H, 0, gen);
  // The cache holds exactly the t earlier positions and the new one, so the dense path's views
  // of it are contiguous (no copy inside the attention op).
  Tensor keys = normal({H, t + 1, hd}, 0.0, 1.0, DType::Float32, &gen);
  Tensor values = normal({H, t + 1, hd}, 0.0, 1.0, DType::Float32, &gen);
  // Every timed call gets the next of `pool` inputs (and head sets), as consecutive tokens would.
  const int pool = 16;
  std::vector<Tensor> xs;
  for (int i = 0; i < pool; ++i) xs.push_back(normal({1, C}, 0.0, 1.0, DType::Float32, &gen));
  std::vector<std::vector<std::vector<int32_t>>> sets;  // [k index][pool entry]
  for (int64_t k : opt.ks) {
    std::vector<std::vector<int32_t>> s;
    for (int i = 0; i < pool; ++i) s.push_back(sparsity::mask_to_sets(sparsity::random_mask({1, H}, k, gen))[0]);
    sets.push_back(s);
  }
  std::vector<int32_t> every(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) every[size_t(h)] = int32_t(h);

  // Checked before anything is timed: each sparse step against the dense step with the same heads
  // masked, on every pool entry.
  for (size_t ki = 0; ki < opt.ks.size(); ++ki)
    for (int i = 0; i < pool; ++i)
      for (bool kv_all : {true, false}) {
        Tensor mask = sparsity::mask_from_indices({H}, std::vector<int64_t>(sets[ki][size_t(i)].begin(), sets[ki][size_t(i)].end()));
        Tensor dense = sparsity::dense_attention_step(xs[size_t(i)], w, keys, values, t, mask);
        Tensor got = kernel.step(xs[size_t(i)], sets[ki][size_t(i)], keys, values, t, kv_all);
        double err = max_abs_diff(got, dense), tol = 1e-5 + 1e-3 * max_abs(dense);
        EMBER_CHECK(err <= tol, "head-speed: the head-sparse step (k = ", opt.ks[ki], ") differs from the dense masked step by ",
                    err, " (tolerance ", tol, ")");
      }

  // Multiply-adds of each variant, to read the times against: projections, scores and values,
  // c_proj.
  auto macs = [&](int64_t k, bool kv_all) {
    int64_t proj_rows = k * hd + 2 * (kv_all ? H : k) * hd;
    return proj_rows * C + k * 2 * (t + 1) * hd + k * hd * C;
  };
  std::printf("\nhead-speed: one token's attention step, C = %lld, %lld heads of %lld, %lld cached positions, float32, "
              "median of %d runs after %d warm-up; %s\n",
              (long long)C, (long long)H, (long long)hd, (long long)t, opt.repeats, opt.warmup, ember::bench::cpu_name().c_str());
  std::printf("%7s %-52s %4s %10s %10s %9s %9s\n", "threads", "variant", "k", "MACs", "time (us)", "vs dense", "vs all");
  json rows = json::array();
  for (int threads : opt.threads) {
    set_num_threads(threads);
    int turn = 0;
    auto next = [&] { return turn++ % pool; };
    const double t_dense = median_seconds([&] { sparsity::dense_attention_step(xs[size_t(next())], w, keys, values, t); },
                                          opt.warmup, opt.repeats);
    const double t_all = median_seconds([&] { kernel.step(xs[size_t(next())], every, keys, values, t, true); }, opt.warmup,
                                        opt.repeats);
    auto emit = [&](const std::string& variant, int64_t k, int64_t m, double s) {
      std::printf("%7d %-52s %4lld %10lld %10.1f %8.2fx %8.2fx\n", threads, variant.c_str(), (long long)k, (long long)m, 1e6 * s,
                  t_dense / s, t_all / s);
      rows.push_back({{"threads", threads}, {"variant", variant}, {"k", k}, {"macs", m}, {"seconds", s},
                      {"speedup_vs_dense_ember", t_dense / s}, {"speedup_vs_kernel_all", t_all / s}});
    };
    emit("dense, Ember ops (matmul, flash2 attention, matmul)", H, macs(H, true), t_dense);
    emit("dense, Ember ops with the standard attention",  H, macs(H, true),
         median_seconds([&] { sparsity::dense_attention_step(xs[size_t(next())], w, keys, values, t, Tensor(), "standard"); },
                        opt.warmup, opt.repeats));
    emit("kernel, every head", H, macs(H, true), t_all);
    for (size_t ki = 0; ki < opt.ks.size(); ++ki) {
      const int64_t k = opt.ks[ki];
      for (bool kv_all : {true, false}) {
        double s = median_seconds([&] { int i = next(); kernel.step(xs[size_t(i)], sets[ki][size_t(i)], keys, values, t, kv_all); },
                                  opt.warmup, opt.repeats);
        emit(kv_all ? "kernel, k heads; keys and values of every head" : "kernel, k heads; nothing of the skipped heads", k,
             macs(k, kv_all), s);
      }
    }
    // The predictor's own cost: a linear C -> H scorer (Ember ops) and the top-k of its H scores.
    const int64_t kp = std::max<int64_t>(1, H / 2);
    emit(str("head predictor ", C, " -> ", H, " (Ember ops) + top-", kp), kp, C * H,
         median_seconds([&] { sparsity::topk_indices(predictor.forward(xs[size_t(next())]), kp); }, opt.warmup, opt.repeats));
  }
  return {{"width", C}, {"heads", H}, {"head_dim", hd}, {"cached", t}, {"ks", opt.ks}, {"threads", opt.threads},
          {"repeats", opt.repeats}, {"warmup", opt.warmup}, {"cpu", ember::bench::cpu_name()}, {"rows", rows}};
}

int head_speed(int argc, char** argv) {
  cxxopts::Options o("contextual_sparsity head-speed",
                     "Wall-clock of one token's attention step with a KV cache that computes only k of the heads "
                     "(their query, keys and values, scores, softmax, weighted values and rows of c_proj) against "
                     "the dense step, at GPT-2 124M shapes by default. Checks every sparse result against the dense "
                     "masked step before timing it.");
  o.add_options()("width", "model width C", cxxopts::value<int64_t>()->default_value("768"))(
      "heads", "attention heads H", cxxopts::value<int64_t>()->default_value("12"))(
      "cached", "positions already in the KV cache", cxxopts::value<int64_t>()->default_value("512"))(
      "ks", "kept heads per token", cxxopts::value<std::string>()->default_value("12,6,3,1"))(
      "threads", "OpenMP thread counts to time", cxxopts::value<std::string>()->default_value("1,2"))(
      "repeats", "timed runs per point (median reported)", cxxopts::value<int>()->default_value("201"))(
      "warmup", "untimed runs before each point", cxxopts::value<int>()->default_value("20"))(
      "json", "write the results to this file", cxxopts::value<std::string>()->default_value(""))("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help()
              << "\nExample: contextual_sparsity head-speed --json examples/contextual_sparsity/data/sparsity_head_speed.json\n";
    return 0;
  }
  using ember::cli::flag;
  HeadSpeedOptions opt;
  opt.width = flag<int64_t>(a, "width", 1, 1 << 16);
  opt.heads = flag<int64_t>(a, "heads", 1, 1 << 12);
  EMBER_CHECK(opt.width % opt.heads == 0, "--heads: ", opt.heads, " does not divide --width ", opt.width,
              " (expected a divisor of the width)");
  opt.cached = flag<int64_t>(a, "cached", 0, 1 << 20);
  opt.repeats = flag<int>(a, "repeats", 1, 1000000);
  opt.warmup = flag<int>(a, "warmup", 0, 1000000);
  opt.ks = ember::cli::int_list(a["ks"].as<std::string>(), "--ks", "head counts such as 12,6,3,1");
  EMBER_CHECK(!opt.ks.empty(), "--ks: no head counts given (expected counts such as 12,6,3,1)");
  for (int64_t k : opt.ks) ember::cli::in_range<int64_t>("--ks", k, 1, opt.heads, str("1 to --heads ", opt.heads));
  opt.threads.clear();
  for (int64_t n : ember::cli::int_list(a["threads"].as<std::string>(), "--threads", "thread counts such as 1,2"))
    opt.threads.push_back(int(ember::cli::in_range<int64_t>("--threads", n, 1, ember::cli::kMaxThreads)));
  EMBER_CHECK(!opt.threads.empty(), "--threads: no thread counts given (expected counts such as 1,2)");
  ember::cli::output_path("--json", a["json"].as<std::string>());
  json doc = {{"program", "contextual_sparsity"}, {"command", "head-speed"}, {"head_speed", head_speed_section(opt)}};
  if (!a["json"].as<std::string>().empty()) {
    write_json(a["json"].as<std::string>(), doc);
    std::printf("wrote %s\n", a["json"].as<std::string>().c_str());
  }
  return 0;
}

}  // namespace ember::study
