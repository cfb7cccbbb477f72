// contextual_sparsity speed: what computing only the kept neurons buys in wall-clock time. The
// gathered kernel (models/sparsity/sparse_mlp.h) reads k of N columns of W1 and rows of W2; it is
// timed against the dense MLP through Ember's matmul, through the same gathered kernel with every
// unit kept, and through OpenBLAS when Ember was built with that peer. Random weights: the time
// depends on the shapes and k, not on the values.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>

#include "common.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "framework/core/autograd/trace.h"
#include "framework/core/parallel.h"
#include <omp.h>
#include "models/sparsity/predictor.h"
#include "models/sparsity/sparse_mlp.h"
#include "models/sparsity/topk.h"
#include "ops/matmul/matmul.h"
#include "ops/op_list.h"
#include "ops/reduce/reduce.h"

namespace ember::study {
namespace {

bool blas_available() {
  try {
    MatmulOptions o;
    o.impl = "blas";
    matmul(ones({2, 2}), ones({2, 2}), o);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<std::vector<int32_t>> to_sets(const Tensor& idx) {
  int64_t rows = idx.size(0), k = idx.size(1);
  const int64_t* p = idx.data<int64_t>();
  std::vector<std::vector<int32_t>> sets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) sets[size_t(r)].assign(p + r * k, p + (r + 1) * k);
  return sets;
}

}  // namespace

json speed_section(const SpeedOptions& opt) {
  autograd::NoGradGuard ng;
  // One thread by default: on a shared machine a descheduled OpenMP thread stalls every parallel
  // region at its barrier, which turned 2-thread medians into 10-100x outliers here.
  const int saved_threads = num_threads();
  if (opt.threads > 0) omp_set_num_threads(opt.threads);
  struct Restore {
    int n;
    ~Restore() { omp_set_num_threads(n); }
  } restore{saved_threads};
  Generator gen(opt.seed);
  const int64_t C = opt.width, N = opt.hidden;
  sparsity::MlpWeights w;
  w.fc_w = normal({C, N}, 0.0, 0.02, DType::Float32, &gen);
  w.fc_b = normal({N}, 0.0, 0.02, DType::Float32, &gen);
  w.proj_w = normal({N, C}, 0.0, 0.02, DType::Float32, &gen);
  w.proj_b = normal({C}, 0.0, 0.02, DType::Float32, &gen);
  sparsity::GatheredMLP g(w);
  sparsity::SparsityPredictor pred(C, opt.rank, N, gen);
  const bool blas = blas_available();
  std::printf("\nspeed: MLP %lld -> %lld -> %lld (GPT-2 124M), float32, %d threads, median of %d runs after %d warm-up; %s\n",
              (long long)C, (long long)N, (long long)C, num_threads(), opt.repeats, opt.warmup, ember::bench::cpu_name().c_str());
  std::printf("%5s %-38s %6s %6s %10s %9s %9s\n", "batch", "variant", "k/n", "union", "time (us)", "vs dense", "vs all");
  json rows = json::array();
  // Every timed call gets the next of `pool` different inputs (and sets), as consecutive tokens
  // would: repeating one input lets the branch predictor and the caches learn it.
  const int pool = 16;
  for (int64_t B : opt.batches) {
    std::vector<Tensor> xs;
    for (int i = 0; i < pool; ++i) xs.push_back(normal({B, C}, 0.0, 1.0, DType::Float32, &gen));
    int turn = 0;
    auto next_x = [&]() -> const Tensor& { return xs[size_t(turn++ % pool)]; };
    double t_dense = median_seconds([&] { sparsity::dense_mlp(next_x(), w); }, opt.warmup, opt.repeats);
    double t_all = median_seconds([&] { g.forward_all(next_x()); }, opt.warmup, opt.repeats);
    auto emit = [&](const std::string& variant, double fraction, int64_t uni, double t) {
      std::printf("%5lld %-38s %5.0f%% %6lld %10.1f %8.2fx %8.2fx\n", (long long)B, variant.c_str(), 100 * fraction,
                  (long long)uni, 1e6 * t, t_dense / t, t_all / t);
      rows.push_back({{"batch", B}, {"variant", variant}, {"fraction", fraction}, {"union", uni}, {"seconds", t},
                      {"speedup_vs_dense_ember", t_dense / t}, {"speedup_vs_gathered_all", t_all / t}});
    };
    emit("dense, Ember matmul", 1.0, N, t_dense);
    if (blas) {
      ScopedVariant use("matmul", "blas");
      emit("dense, OpenBLAS matmul", 1.0, N, median_seconds([&] { sparsity::dense_mlp(next_x(), w); }, opt.warmup, opt.repeats));
    }
    emit("gathered kernel, every unit", 1.0, N, t_all);
    for (double f : opt.fractions) {
      int64_t k = sparsity::k_for_fraction(f, N);
      // Shared: every token keeps the same k units (union = k, the best case for a batch).
      // Independent: each token its own random k (the union grows towards N with the batch).
      for (int independent = 0; independent < (B > 1 ? 2 : 1); ++independent) {
        std::vector<std::vector<std::vector<int32_t>>> sets;
        int64_t uni_sum = 0;
        for (int i = 0; i < pool; ++i) {
          Tensor mask;
          if (independent) {
            mask = sparsity::random_mask({B, N}, k, gen);
          } else {  // one random set (the positions of a random mask's ones), repeated for every token
            Tensor one = sparsity::random_mask({1, N}, k, gen);
            mask = sparsity::mask_from_indices({B, N}, sparsity::topk_indices(one, k).to_vector<int64_t>());
          }
          sets.push_back(sparsity::mask_to_sets(mask));
          double err = max_abs_diff(g.forward(xs[size_t(i)], sets.back()), sparsity::dense_mlp(xs[size_t(i)], w, mask));
          EMBER_CHECK(err < 1e-3, "speed: the gathered MLP differs from the dense masked MLP by ", err);
          std::vector<char> in_union(static_cast<size_t>(N), 0);
          for (const auto& set : sets.back())
            for (int32_t j : set) in_union[size_t(j)] = 1;
          uni_sum += std::count(in_union.begin(), in_union.end(), 1);
        }
        double t = median_seconds([&] { int i = turn++ % pool; g.forward(xs[size_t(i)], sets[size_t(i)]); }, opt.warmup, opt.repeats);
        emit(B == 1 ? "gathered kernel, k units" : independent ? "gathered, own k per token" : "gathered, same k for all tokens", f,
             uni_sum / pool, t);
      }
    }
    // The predictor's own cost: scores from the low-rank net, then each token's top-k as index sets.
    int64_t k10 = sparsity::k_for_fraction(0.1, N);
    double t_pred = median_seconds([&] { to_sets(sparsity::topk_indices(pred.forward(next_x()), k10, false)); }, opt.warmup, opt.repeats);
    emit(str("predictor r=", opt.rank, " (Ember ops) + top-k"), 0.1, k10, t_pred);
    sparsity::PredictorScorer scorer(pred);
    t_pred = median_seconds([&] { to_sets(sparsity::topk_indices(scorer.scores(next_x()), k10, false)); }, opt.warmup, opt.repeats);
    emit(str("predictor r=", opt.rank, " (loops) + top-k"), 0.1, k10, t_pred);
    t_pred = median_seconds([&] { scorer.scores(next_x()); }, opt.warmup, opt.repeats);
    emit(str("predictor r=", opt.rank, " (loops), scores only"), 0.1, k10, t_pred);
  }
  return {{"width", C}, {"hidden", N}, {"rank", opt.rank}, {"threads", num_threads()}, {"repeats", opt.repeats},
          {"warmup", opt.warmup}, {"cpu", ember::bench::cpu_name()}, {"blas_peer", blas}, {"rows", rows}};
}

int speed(int argc, char** argv) {
  cxxopts::Options o("contextual_sparsity speed",
                     "Wall-clock of a transformer MLP that computes only the kept neurons (gathered columns of W1 and "
                     "rows of W2) against the dense MLP, at GPT-2 124M shapes by default. Validates every sparse result "
                     "against the dense masked MLP before timing it. For a fair OpenBLAS peer run it under "
                     "the environment build/bin/openblas_env prints (examples/common/openblas_core.h's OPENBLAS_CORETYPE).");
  o.add_options()("width", "model width C", cxxopts::value<int64_t>()->default_value("768"))(
      "hidden", "MLP hidden units N", cxxopts::value<int64_t>()->default_value("3072"))(
      "batches", "token batch sizes", cxxopts::value<std::string>()->default_value("1,16"))(
      "fractions", "kept fractions k/N", cxxopts::value<std::string>()->default_value("0.05,0.1,0.2,0.3,0.5,1"))(
      "rank", "predictor rank r", cxxopts::value<int64_t>()->default_value("32"))(
      "repeats", "timed runs per point (median reported)", cxxopts::value<int>()->default_value("60"))(
      "threads", "OpenMP threads while timing (0: OMP_NUM_THREADS or all cores)", cxxopts::value<int>()->default_value("1"))(
      "json", "write the results to this file", cxxopts::value<std::string>()->default_value(""))("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\nExample: $(build/bin/openblas_env) OPENBLAS_NUM_THREADS=1 contextual_sparsity speed --json results/sparsity_speed.json\n";
    return 0;
  }
  SpeedOptions opt;
  // Sizes up to 65536 (GPT-2's largest width is 1600): far above any study point, far below
  // products whose weights alone would exhaust memory.
  using ember::cli::flag;
  opt.width = flag<int64_t>(a, "width", 1, 1 << 16);
  opt.hidden = flag<int64_t>(a, "hidden", 1, 1 << 18);
  opt.rank = flag<int64_t>(a, "rank", 1, 1 << 16);
  opt.repeats = flag<int>(a, "repeats", 1, 1000000);
  opt.threads = flag<int>(a, "threads", 0, int(ember::cli::kMaxThreads));
  opt.fractions = parse_fractions(a["fractions"].as<std::string>(), "--fractions");
  opt.batches = ember::cli::int_list(a["batches"].as<std::string>(), "--batches", "token batch sizes such as 1,16");
  EMBER_CHECK(!opt.batches.empty(), "--batches: no sizes given (expected token batch sizes such as 1,16)");
  for (int64_t b : opt.batches) ember::cli::in_range<int64_t>("--batches", b, 1, 1 << 16, "batch sizes from 1 to 65536");
  ember::cli::output_path("--json", a["json"].as<std::string>());
  json doc = {{"program", "contextual_sparsity"}, {"command", "speed"}, {"speed", speed_section(opt)}};
  if (!a["json"].as<std::string>().empty()) {
    write_json(a["json"].as<std::string>(), doc);
    std::printf("wrote %s\n", a["json"].as<std::string>().c_str());
  }
  return 0;
}

}  // namespace ember::study
