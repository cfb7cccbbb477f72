// contextual_sparsity gpt: contextual sparsity in a GPT-2 model folder, through GPT2::hooks.
//   1. a training-text pass (dense) gathers the static statistics (mean |activation| of each MLP
//      neuron, mean output norm of each head) and the predictors' training data (each layer's MLP
//      input and its oracle top-k neurons; each layer's attention input and its oracle top-k heads);
//   2. one low-rank neuron predictor and one head predictor per layer are trained with Ember
//      (autograd + AdamW, BCE on the sets);
//   3. a dense validation pass gives the loss, how many neurons carry 90/95/99% of each token's
//      activation norm, and the recall of the predicted (and static) neuron and head sets against
//      the oracle's;
//   4. validation loss with each token keeping only k MLP neurons per layer (oracle top-k by
//      |activation|, static, random, predicted) and only k heads (oracle by output norm, static,
//      random, predicted), k swept;
//   5. the speed section (cmd_speed.cpp) unless --no-speed.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <limits>

#include "common.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "framework/core/autograd/trace.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/text_data.h"
#include "models/gpt2/tokenizer.h"
#include "examples/common/cli_lists.h"
#include "models/sparsity/head_predictor.h"
#include "models/sparsity/heads.h"
#include "models/sparsity/predictor.h"
#include "models/sparsity/statistics.h"
#include "models/sparsity/topk.h"
#include "ops/elementwise/elementwise.h"
#include "ops/shape/shape_ops.h"
#include "examples/common/progress_bar.h"

namespace ember::study {
namespace {

using Clock = std::chrono::steady_clock;
using gpt2::GPT2;

struct Windows {
  Tensor ids, targets;  // (count, T) int64
};

// Token ids of a text: raw bytes for the byte-level models `gpt2 train` writes (vocabulary 257),
// else the folder's BPE tokenizer.
std::vector<int64_t> to_ids(const std::string& text, const gpt2::Config& cfg, const std::string& dir) {
  std::vector<int64_t> ids;
  if (cfg.vocab_size == 257) {
    ids.reserve(text.size());
    for (unsigned char c : text) ids.push_back(int64_t(c));
  } else {
    ids = gpt2::Tokenizer::from_dir(dir).encode(text);
  }
  return ids;
}

// `count` windows of T + 1 tokens at evenly spaced positions: the same text every run.
Windows cut_windows(const std::vector<int64_t>& ids, int64_t count, int64_t T, const char* what) {
  EMBER_CHECK(int64_t(ids.size()) > T + 1, what, ": ", ids.size(), " tokens are too few for windows of ", T + 1);
  Windows w{empty({count, T}, DType::Int64), empty({count, T}, DType::Int64)};
  int64_t span = int64_t(ids.size()) - T - 1;
  int64_t* x = w.ids.data<int64_t>();
  int64_t* y = w.targets.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    int64_t s = count == 1 ? 0 : i * span / (count - 1);
    for (int64_t t = 0; t < T; ++t) {
      x[i * T + t] = ids[size_t(s + t)];
      y[i * T + t] = ids[size_t(s + t + 1)];
    }
  }
  return w;
}

// Mean next-token loss (nats per token) over the windows, with whatever hooks the model holds.
double eval_loss(GPT2& model, const Windows& w, int64_t batch) {
  autograd::NoGradGuard ng;
  int64_t n = w.ids.size(0);
  double sum = 0;
  for (int64_t b0 = 0; b0 < n; b0 += batch) {
    int64_t b1 = std::min(n, b0 + batch);
    sum += gpt2::lm_loss(model.forward(w.ids.slice(0, b0, b1)), w.targets.slice(0, b0, b1)).item() * double(b1 - b0);
  }
  return sum / double(n);
}

double quantile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return double(v[size_t(std::min<double>(double(v.size() - 1), std::floor(q * double(v.size()))))]);
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

int gpt(int argc, char** argv) {
  cxxopts::Options o("contextual_sparsity gpt",
                     "Contextual sparsity in a GPT-2 model folder (one written by `gpt2 train`, or a Hugging Face "
                     "GPT-2 folder with config.json, model.safetensors, vocab.json, merges.txt). Validation text: the "
                     "held-out tenth of the fortunes corpus (models/gpt2/text_data.h), cut into fixed windows.");
  o.add_options()("model", "model folder", cxxopts::value<std::string>()->default_value("results/gpt2-fortunes"))(
      "data", "folder of text files (fortunes)", cxxopts::value<std::string>()->default_value("/usr/share/games/fortunes"))(
      "context", "tokens per window (0: min(128, the model's context))", cxxopts::value<int64_t>()->default_value("0"))(
      "val-windows", "validation windows", cxxopts::value<int64_t>()->default_value("48"))(
      "train-windows", "training-text windows for the static statistics and the predictor's data",
      cxxopts::value<int64_t>()->default_value("96"))(
      "batch", "windows per forward pass", cxxopts::value<int64_t>()->default_value("16"))(
      "fractions", "kept fractions of MLP neurons", cxxopts::value<std::string>()->default_value("0.02,0.05,0.1,0.2,0.3,0.5,0.75,1"))(
      "rank", "predictor rank r (C -> r -> 4C)", cxxopts::value<int64_t>()->default_value("32"))(
      "predictor-fraction", "the top-k fraction the predictor is trained to find", cxxopts::value<double>()->default_value("0.2"))(
      "predictor-epochs", "predictor training epochs", cxxopts::value<int64_t>()->default_value("8"))(
      "predictor-lr", "predictor learning rate (AdamW)", cxxopts::value<double>()->default_value("0.003"))(
      "head-rank", "head predictor rank (0: one linear map C -> n_head; r: C -> r -> n_head)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "head-predictor-k", "the top-k heads the head predictor is trained to find (0: half the heads)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "head-epochs", "head predictor training epochs", cxxopts::value<int64_t>()->default_value("20"))(
      "head-ks", "kept head counts to sweep (empty: every k up to 12 heads, else about 8 of them)",
      cxxopts::value<std::string>()->default_value(""))(
      "sample-tokens", "tokens of greedy text to compare dense and predicted-sparse generation (0: none)",
      cxxopts::value<int64_t>()->default_value("80"))(
      "seed", "seed of the random baselines and the predictors", cxxopts::value<uint64_t>()->default_value("1"))(
      "no-speed", "skip the speed section")(
      "speed-repeats", "timed runs per speed point", cxxopts::value<int>()->default_value("60"))(
      "speed-threads", "OpenMP threads in the speed section (0: all)", cxxopts::value<int>()->default_value("1"))(
      "json", "write the results to this file", cxxopts::value<std::string>()->default_value(""))(
      "no-progress", "do not draw progress bars")("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\nExample: contextual_sparsity gpt --model results/gpt2-fortunes --json results/sparsity_gpt.json\n";
    return 0;
  }
  const bool progress = !a.count("no-progress");
  const uint64_t seed = a["seed"].as<uint64_t>();
  // Every numeric flag is checked before the model is read (examples/common/cli_flags.h); --context
  // and --rank are checked against the model again once it is loaded.
  using ember::cli::flag;
  const int64_t context_flag = flag<int64_t>(a, "context", 0, gpt2::kMaxPositions);
  const int64_t batch = flag<int64_t>(a, "batch", 1, 1 << 16), n_val = flag<int64_t>(a, "val-windows", 1, 1 << 20),
                n_train = flag<int64_t>(a, "train-windows", 1, 1 << 20);
  const double pf = flag<double>(a, "predictor-fraction", std::numeric_limits<double>::min(), 1.0, "a fraction in (0, 1]");
  const int64_t rank = flag<int64_t>(a, "rank", 1, gpt2::kMaxEmbd);
  sparsity::PredictorTraining popt;
  popt.epochs = flag<int64_t>(a, "predictor-epochs", 1, 1 << 20);
  popt.lr = flag<double>(a, "predictor-lr", 1e-12, 10, "a learning rate from 1e-12 to 10");
  const int64_t sample_tokens_flag = flag<int64_t>(a, "sample-tokens", 0, 1 << 20);
  const int64_t head_rank = flag<int64_t>(a, "head-rank", 0, gpt2::kMaxEmbd);
  const int64_t head_k_flag = flag<int64_t>(a, "head-predictor-k", 0, gpt2::kMaxHeads);
  sparsity::PredictorTraining hopt = popt;
  hopt.epochs = flag<int64_t>(a, "head-epochs", 1, 1 << 20);
  std::vector<int64_t> head_ks;
  if (!a["head-ks"].as<std::string>().empty())
    for (int64_t k : ember::cli::int_list(a["head-ks"].as<std::string>(), "--head-ks", "head counts such as 1,2,4,6"))
      head_ks.push_back(ember::cli::in_range<int64_t>("--head-ks", k, 1, gpt2::kMaxHeads));
  const int speed_repeats = flag<int>(a, "speed-repeats", 1, 1000000);
  const int speed_threads = flag<int>(a, "speed-threads", 0, int(ember::cli::kMaxThreads));
  const std::vector<double> fractions = parse_fractions(a["fractions"].as<std::string>(), "--fractions");
  ember::cli::output_path("--json", a["json"].as<std::string>());
  auto t_start = Clock::now();
  const std::string dir = a["model"].as<std::string>();
  EMBER_CHECK(std::filesystem::is_directory(dir), "--model: '", dir, "' is not a folder (train one with `gpt2 train --out ", dir, "`)");
  std::unique_ptr<GPT2> model_ptr = gpt2::load_model(dir);
  GPT2& model = *model_ptr;
  model.eval();
  const gpt2::Config& cfg = model.config();
  const int64_t L = cfg.n_layer, C = cfg.n_embd, N = 4 * cfg.n_embd, H = cfg.n_head;
  int64_t T = context_flag;
  if (T == 0) T = std::min<int64_t>(128, cfg.n_positions);
  EMBER_CHECK(T > 1 && T <= cfg.n_positions, "--context ", T, " must be in [2, ", cfg.n_positions, "]");
  const int64_t khp = head_k_flag == 0 ? std::max<int64_t>(1, H / 2) : head_k_flag;
  EMBER_CHECK(khp <= H, "--head-predictor-k: ", khp, " is above the model's ", H, " heads (expected 1 to ", H, ")");
  for (int64_t k : head_ks)
    EMBER_CHECK(k <= H, "--head-ks: ", k, " is above the model's ", H, " heads (expected 1 to ", H, ")");
  if (head_ks.empty())
    for (int64_t k = 1; k <= H; ++k)
      if (H <= 12 || k == 1 || k == H || k % std::max<int64_t>(1, H / 8) == 0) head_ks.push_back(k);
  gpt2::TextCorpus corpus = gpt2::TextCorpus::from_fortunes(a["data"].as<std::string>());
  Windows val = cut_windows(to_ids(corpus.val_text(), cfg, dir), n_val, T, "validation text");
  Windows train = cut_windows(to_ids(corpus.train_text(), cfg, dir), n_train, T, "training text");
  std::printf("model %s: %s, %lld parameters\nvalidation: %lld windows of %lld tokens; statistics and predictor data: %lld "
              "training windows\n",
              dir.c_str(), model.name().c_str(), (long long)model.num_parameters(), (long long)n_val, (long long)T,
              (long long)n_train);

  // ---- 1. training-text pass: static statistics and the predictor's data ----
  const int64_t kp = sparsity::k_for_fraction(pf, N);
  std::vector<sparsity::ActivationMeans> mlp_means, head_means;
  for (int64_t l = 0; l < L; ++l) mlp_means.emplace_back(N, /*magnitude=*/true), head_means.emplace_back(H);
  std::vector<std::vector<Tensor>> pred_x(static_cast<size_t>(L)), pred_y(static_cast<size_t>(L));
  std::vector<std::vector<Tensor>> head_x(static_cast<size_t>(L)), head_y(static_cast<size_t>(L));
  {
    autograd::NoGradGuard ng;
    model.hooks.mlp_input = [&](int64_t l, const Tensor& h) { pred_x[size_t(l)].push_back(h.reshape({-1, C}).contiguous()); };
    model.hooks.mlp_hidden = [&](int64_t l, const Tensor& act) {
      mlp_means[size_t(l)].add(act);
      pred_y[size_t(l)].push_back(sparsity::topk_mask(act.reshape({-1, N}), kp, true));
      return act;
    };
    model.hooks.attn_input = [&](int64_t l, const Tensor& h) { head_x[size_t(l)].push_back(h.reshape({-1, C}).contiguous()); };
    model.hooks.attn_heads = [&](int64_t l, const Tensor& y) {
      head_means[size_t(l)].add(sparsity::head_norms(y));
      head_y[size_t(l)].push_back(sparsity::head_topk_targets(y, khp));
      return y;
    };
    double train_loss = eval_loss(model, train, batch);
    model.hooks = {};
    std::printf("dense loss on the training windows: %.4f\n", train_loss);
  }

  // ---- 2. one predictor per layer ----
  EMBER_CHECK(rank <= N, "--rank: ", rank, " is above the model's ", N, " MLP neurons (expected 1 to ", N, ")");
  popt.seed = seed;
  std::vector<std::unique_ptr<sparsity::SparsityPredictor>> predictors;
  json predictor_training = json::array();
  for (int64_t l = 0; l < L; ++l) {
    Generator g(seed * 101 + uint64_t(l));
    predictors.push_back(std::make_unique<sparsity::SparsityPredictor>(C, rank, N, g));
    Tensor X = concat(pred_x[size_t(l)], 0), Y = concat(pred_y[size_t(l)], 0);
    pred_x[size_t(l)].clear();
    pred_y[size_t(l)].clear();
    examples::ProgressBar bar(str("predictor layer ", l), popt.epochs * ((X.size(0) + popt.batch - 1) / popt.batch), progress);
    auto t0 = Clock::now();
    std::vector<double> losses = sparsity::train_predictor(*predictors.back(), X, Y, popt, [&](int64_t s, int64_t, double loss) {
      bar.update(s, s * popt.batch, str("bce ", fmt("%.4f", loss)));
    });
    bar.finish(str("bce ", fmt("%.4f", losses.back())));
    predictor_training.push_back({{"layer", l}, {"examples", X.size(0)}, {"epoch_loss", losses}, {"seconds", seconds_since(t0)}});
  }
  const int64_t predictor_params = predictors[0]->num_parameters();
  std::printf("predictor: %s per layer, %lld parameters (%.1f%% of the MLP's %lld weights), trained on the top %.0f%%\n",
              predictors[0]->name().c_str(), (long long)predictor_params,
              100.0 * double(predictor_params) / double(2 * C * N), (long long)(2 * C * N), 100 * pf);

  // ---- 2b. one head predictor per layer, reading the attention input (ln_1's output) ----
  hopt.seed = seed;
  std::vector<std::unique_ptr<sparsity::HeadPredictor>> head_predictors;
  json head_training = json::array();
  for (int64_t l = 0; l < L; ++l) {
    Generator g(seed * 131 + 7 + uint64_t(l));
    head_predictors.push_back(std::make_unique<sparsity::HeadPredictor>(C, H, head_rank, g));
    Tensor X = concat(head_x[size_t(l)], 0), Y = concat(head_y[size_t(l)], 0);
    head_x[size_t(l)].clear();
    head_y[size_t(l)].clear();
    examples::ProgressBar bar(str("head predictor layer ", l), hopt.epochs * ((X.size(0) + hopt.batch - 1) / hopt.batch), progress);
    auto t0 = Clock::now();
    std::vector<double> losses = sparsity::train_head_predictor(*head_predictors.back(), X, Y, hopt, [&](int64_t s, int64_t, double loss) {
      bar.update(s, s * hopt.batch, str("bce ", fmt("%.4f", loss)));
    });
    bar.finish(str("bce ", fmt("%.4f", losses.back())));
    head_training.push_back({{"layer", l}, {"examples", X.size(0)}, {"epoch_loss", losses}, {"seconds", seconds_since(t0)}});
  }
  const int64_t head_predictor_params = head_predictors[0]->num_parameters();
  std::printf("head predictor: %s per layer, %lld parameters (%.2f%% of the attention block's %lld weights), trained on the "
              "top %lld of %lld heads\n",
              head_predictors[0]->name().c_str(), (long long)head_predictor_params,
              100.0 * double(head_predictor_params) / double(4 * C * C), (long long)(4 * C * C), (long long)khp, (long long)H);

  // ---- 3. dense validation pass: loss, norm coverage, recall of predicted and static sets ----
  const std::vector<double> norm_parts = {0.9, 0.95, 0.99};
  std::vector<std::vector<std::vector<int64_t>>> coverage(size_t(L), std::vector<std::vector<int64_t>>(norm_parts.size()));
  // hits[l][f], total[l][f]: predicted (and static) sets against the oracle's, per fraction.
  std::vector<std::vector<double>> p_hit(size_t(L), std::vector<double>(fractions.size())), s_hit = p_hit, total = p_hit;
  std::vector<std::vector<Tensor>> static_masks(static_cast<size_t>(L));  // per layer and fraction, (N)
  for (int64_t l = 0; l < L; ++l)
    for (double f : fractions) static_masks[size_t(l)].push_back(sparsity::mask_from_indices({N}, mlp_means[size_t(l)].top(sparsity::k_for_fraction(f, N))));
  std::vector<Tensor> last_input(static_cast<size_t>(L)), last_attn_input(static_cast<size_t>(L));
  // The same for heads, per layer and swept k: hits of the predicted and static head sets.
  std::vector<std::vector<double>> hp_hit(size_t(L), std::vector<double>(head_ks.size())), hs_hit = hp_hit, h_total = hp_hit;
  std::vector<std::vector<Tensor>> static_head_masks(static_cast<size_t>(L));  // per layer and k, (H)
  for (int64_t l = 0; l < L; ++l)
    for (int64_t k : head_ks) static_head_masks[size_t(l)].push_back(sparsity::mask_from_indices({H}, head_means[size_t(l)].top(k)));
  double dense_loss;
  {
    autograd::NoGradGuard ng;
    model.hooks.attn_input = [&](int64_t l, const Tensor& h) { last_attn_input[size_t(l)] = h; };
    model.hooks.attn_heads = [&](int64_t l, const Tensor& y) {
      Tensor norms = sparsity::head_norms(y).reshape({-1, H});
      Tensor scores = head_predictors[size_t(l)]->forward(last_attn_input[size_t(l)]).reshape({-1, H});
      for (size_t i = 0; i < head_ks.size(); ++i) {
        const int64_t k = head_ks[i];
        Tensor oracle = sparsity::topk_mask(norms, k);
        const double n = double(k * norms.size(0));
        h_total[size_t(l)][i] += n;
        hp_hit[size_t(l)][i] += sparsity::set_recall(sparsity::topk_mask(scores, k), oracle) * n;
        hs_hit[size_t(l)][i] += sparsity::set_recall(oracle * static_head_masks[size_t(l)][i], oracle) * n;
      }
      return y;
    };
    model.hooks.mlp_input = [&](int64_t l, const Tensor& h) { last_input[size_t(l)] = h; };
    model.hooks.mlp_hidden = [&](int64_t l, const Tensor& act) {
      Tensor rows = act.reshape({-1, N});
      auto cov = sparsity::norm_coverage(rows, norm_parts);
      for (size_t p = 0; p < norm_parts.size(); ++p)
        coverage[size_t(l)][p].insert(coverage[size_t(l)][p].end(), cov[p].begin(), cov[p].end());
      Tensor scores = predictors[size_t(l)]->forward(last_input[size_t(l)]).reshape({-1, N});
      for (size_t f = 0; f < fractions.size(); ++f) {
        int64_t k = sparsity::k_for_fraction(fractions[f], N);
        Tensor oracle = sparsity::topk_mask(rows, k, true);
        total[size_t(l)][f] += double(k * rows.size(0));
        p_hit[size_t(l)][f] += sparsity::set_recall(sparsity::topk_mask(scores, k), oracle) * double(k * rows.size(0));
        s_hit[size_t(l)][f] += sparsity::set_recall(oracle * static_masks[size_t(l)][f], oracle) * double(k * rows.size(0));
      }
      return act;
    };
    dense_loss = eval_loss(model, val, batch);
    model.hooks = {};
  }
  std::printf("\ndense validation loss %.4f nats/token, perplexity %.3f\n", dense_loss, std::exp(dense_loss));

  std::printf("\nMLP neurons per token that carry a share of the hidden activation's L2 norm (of N = %lld; mean, "
              "median, 90th percentile over %lld tokens)\n%5s",
              (long long)N, (long long)(n_val * T), "layer");
  for (double p : norm_parts) std::printf(" | %24s", str(fmt("%.0f", 100 * p), "% of the norm").c_str());
  std::printf("\n");
  json coverage_json = json::array();
  for (int64_t l = 0; l < L; ++l) {
    std::printf("%5lld", (long long)l);
    json row = {{"layer", l}};
    for (size_t p = 0; p < norm_parts.size(); ++p) {
      const auto& v = coverage[size_t(l)][p];
      double mean = 0;
      for (int64_t c : v) mean += double(c);
      mean /= double(std::max<size_t>(v.size(), 1));
      double med = quantile(v, 0.5), p90 = quantile(v, 0.9);
      std::printf(" | %6.1f%% %6.1f%% %6.1f%%   ", 100 * mean / N, 100 * med / N, 100 * p90 / N);
      row[fmt("%.2f", norm_parts[p])] = {{"mean", mean}, {"median", med}, {"p90", p90}, {"mean_fraction", mean / N}};
    }
    std::printf("\n");
    coverage_json.push_back(row);
  }

  std::printf("\nrecall of the oracle's top-k MLP neurons (per layer, over validation tokens): predictor / static\n%7s", "k/n");
  for (int64_t l = 0; l < L; ++l) std::printf(" | %15s", str("layer ", l).c_str());
  std::printf(" | %6s\n", "chance");
  json recall_json = json::array();
  for (size_t f = 0; f < fractions.size(); ++f) {
    std::printf("%6.1f%%", 100 * fractions[f]);
    json pr = json::array(), sr = json::array();
    for (int64_t l = 0; l < L; ++l) {
      double p = p_hit[size_t(l)][f] / total[size_t(l)][f], s = s_hit[size_t(l)][f] / total[size_t(l)][f];
      pr.push_back(p);
      sr.push_back(s);
      std::printf(" | %6.1f%% %6.1f%%", 100 * p, 100 * s);
    }
    double chance = double(sparsity::k_for_fraction(fractions[f], N)) / double(N);
    std::printf(" | %5.1f%%\n", 100 * chance);
    recall_json.push_back({{"fraction", fractions[f]}, {"predictor", pr}, {"static", sr}, {"chance", chance}});
  }

  std::printf("\nrecall of the oracle's top-k heads (largest output norm; per layer, over validation tokens): head "
              "predictor / static\n%4s", "k");
  for (int64_t l = 0; l < L; ++l) std::printf(" | %15s", str("layer ", l).c_str());
  std::printf(" | %6s\n", "chance");
  json head_recall_json = json::array();
  for (size_t i = 0; i < head_ks.size(); ++i) {
    std::printf("%4lld", (long long)head_ks[i]);
    json pr = json::array(), sr = json::array();
    for (int64_t l = 0; l < L; ++l) {
      double p = hp_hit[size_t(l)][i] / h_total[size_t(l)][i], s = hs_hit[size_t(l)][i] / h_total[size_t(l)][i];
      pr.push_back(p);
      sr.push_back(s);
      std::printf(" | %6.1f%% %6.1f%%", 100 * p, 100 * s);
    }
    double chance = double(head_ks[i]) / double(H);
    std::printf(" | %5.1f%%\n", 100 * chance);
    head_recall_json.push_back({{"k", head_ks[i]}, {"predictor", pr}, {"static", sr}, {"chance", chance}});
  }

  // ---- 4. sweeps ----
  const int64_t n_evals = int64_t(fractions.size()) * 4 + int64_t(head_ks.size()) * 4;
  examples::ProgressBar bar("sparse evaluations", n_evals, progress);
  int64_t done = 0;
  Generator gen(seed * 7919);
  autograd::NoGradGuard ng;
  auto run = [&](const std::string& what) {
    double loss = eval_loss(model, val, batch);
    model.hooks = {};
    ++done;
    bar.update(done, done, what);
    return loss;
  };
  json mlp_rows = json::array();
  std::vector<std::array<double, 4>> mlp_loss;
  for (size_t f = 0; f < fractions.size(); ++f) {
    int64_t k = sparsity::k_for_fraction(fractions[f], N);
    std::array<double, 4> loss;
    model.hooks.mlp_hidden = [&](int64_t, const Tensor& act) { return sparsity::keep_topk(act, k, true); };
    loss[0] = run("mlp oracle");
    model.hooks.mlp_hidden = [&](int64_t l, const Tensor& act) { return act * static_masks[size_t(l)][f]; };
    loss[1] = run("mlp static");
    model.hooks.mlp_hidden = [&](int64_t, const Tensor& act) { return act * sparsity::random_mask(act.shape(), k, gen); };
    loss[2] = run("mlp random");
    model.hooks.mlp_input = [&](int64_t l, const Tensor& h) { last_input[size_t(l)] = h; };
    model.hooks.mlp_hidden = [&](int64_t l, const Tensor& act) {
      return act * sparsity::topk_mask(predictors[size_t(l)]->forward(last_input[size_t(l)]), k);
    };
    loss[3] = run("mlp predictor");
    mlp_loss.push_back(loss);
    mlp_rows.push_back({{"fraction", fractions[f]}, {"k", k}, {"oracle", loss[0]}, {"static", loss[1]}, {"random", loss[2]},
                        {"predictor", loss[3]}});
  }
  json head_rows = json::array();
  std::vector<std::array<double, 4>> head_loss;
  for (int64_t k : head_ks) {
    std::array<double, 4> loss;
    model.hooks.attn_heads = [&](int64_t, const Tensor& y) {
      return sparsity::apply_head_mask(y, sparsity::topk_mask(sparsity::head_norms(y), k));
    };
    loss[0] = run("heads oracle");
    model.hooks.attn_heads = [&](int64_t l, const Tensor& y) {
      return sparsity::apply_head_mask(y, sparsity::mask_from_indices({y.size(0), y.size(2), H}, head_means[size_t(l)].top(k)));
    };
    loss[1] = run("heads static");
    model.hooks.attn_heads = [&](int64_t, const Tensor& y) {
      return sparsity::apply_head_mask(y, sparsity::random_mask({y.size(0), y.size(2), H}, k, gen));
    };
    loss[2] = run("heads random");
    model.hooks.attn_input = [&](int64_t l, const Tensor& h) { last_attn_input[size_t(l)] = h; };
    model.hooks.attn_heads = [&](int64_t l, const Tensor& y) {
      return sparsity::apply_head_mask(y, head_predictors[size_t(l)]->predict_mask(last_attn_input[size_t(l)], k));
    };
    loss[3] = run("heads predictor");
    head_loss.push_back(loss);
    head_rows.push_back({{"k", k}, {"fraction", double(k) / double(H)}, {"oracle", loss[0]}, {"static", loss[1]}, {"random", loss[2]},
                         {"predictor", loss[3]}});
  }
  bar.finish("done");

  std::printf("\nMLP: validation perplexity keeping k of %lld neurons per token in every layer (dense %.3f)\n", (long long)N,
              std::exp(dense_loss));
  std::printf("%7s %6s | %9s %9s %9s %9s\n", "k/n", "k", "oracle", "static", "random", "predictor");
  for (size_t f = 0; f < fractions.size(); ++f)
    std::printf("%6.1f%% %6lld | %9.3f %9.3f %9.3f %9.3f\n", 100 * fractions[f], (long long)mlp_rows[f]["k"].get<int64_t>(),
                std::exp(mlp_loss[f][0]), std::exp(mlp_loss[f][1]), std::exp(mlp_loss[f][2]), std::exp(mlp_loss[f][3]));
  std::printf("\nattention: validation perplexity keeping k of %lld heads per token in every layer (dense %.3f)\n",
              (long long)H, std::exp(dense_loss));
  std::printf("%4s | %9s %9s %9s %9s\n", "k", "oracle", "static", "random", "predictor");
  for (size_t i = 0; i < head_ks.size(); ++i)
    std::printf("%4lld | %9.3f %9.3f %9.3f %9.3f\n", (long long)head_ks[i], std::exp(head_loss[i][0]), std::exp(head_loss[i][1]),
                std::exp(head_loss[i][2]), std::exp(head_loss[i][3]));

  // ---- greedy generation, dense and with the predicted sets ----
  json sample_json;
  const int64_t sample_tokens = std::min<int64_t>(sample_tokens_flag, cfg.n_positions - 16);
  if (sample_tokens > 0) {
    std::vector<int64_t> prompt(val.ids.data<int64_t>(), val.ids.data<int64_t>() + 16);
    gpt2::SamplingOptions so;
    so.max_new_tokens = sample_tokens;
    std::vector<int64_t> dense_ids = gpt2::generate(model, prompt, so);
    model.hooks.mlp_input = [&](int64_t l, const Tensor& h) { last_input[size_t(l)] = h; };
    model.hooks.mlp_hidden = [&](int64_t l, const Tensor& act) {
      return act * sparsity::topk_mask(predictors[size_t(l)]->forward(last_input[size_t(l)]), kp);
    };
    std::vector<int64_t> sparse_ids = gpt2::generate(model, prompt, so);
    model.hooks = {};
    int64_t same_prefix = 0;
    while (same_prefix < int64_t(dense_ids.size()) && dense_ids[size_t(same_prefix)] == sparse_ids[size_t(same_prefix)]) ++same_prefix;
    auto text = [&](const std::vector<int64_t>& ids) {
      std::string s;
      if (cfg.vocab_size == 257) {
        for (int64_t id : ids) s += id < 256 ? char(id) : '?';
      } else {
        s = gpt2::Tokenizer::from_dir(dir).decode(ids);
      }
      for (char& c : s)
        if (c == '\n' || c == '\t') c = ' ';
      return s;
    };
    std::printf("\ngreedy continuation of a validation prompt [%s]\n  dense:           %s\n  predicted %3.0f%%:  %s\n"
                "  identical for the first %lld of %lld tokens\n",
                text(prompt).c_str(), text(dense_ids).c_str(), 100 * pf, text(sparse_ids).c_str(), (long long)same_prefix,
                (long long)dense_ids.size());
    sample_json = {{"prompt", text(prompt)}, {"dense", text(dense_ids)}, {"predicted", text(sparse_ids)},
                   {"identical_prefix_tokens", same_prefix}, {"tokens", dense_ids.size()}};
  }

  json doc = {{"program", "contextual_sparsity"},
              {"command", "gpt"},
              {"model", dir},
              {"config", json::parse(cfg.to_json_string())},
              {"context", T},
              {"val_windows", n_val},
              {"train_windows", n_train},
              {"dense_loss", dense_loss},
              {"mlp_hidden", N},
              {"heads", H},
              {"norm_coverage", coverage_json},
              {"predictor", {{"rank", rank}, {"fraction", pf}, {"k", kp}, {"parameters_per_layer", predictor_params},
                             {"training", predictor_training}, {"recall", recall_json}}},
              {"mlp", mlp_rows},
              {"attention", head_rows},
              {"head_predictor", {{"rank", head_rank}, {"k", khp}, {"parameters_per_layer", head_predictor_params},
                                  {"epochs", hopt.epochs}, {"training", head_training}, {"recall", head_recall_json}}},
              {"sample", sample_json},
              {"cpu", ember::bench::cpu_name()}};
  if (!a.count("no-speed")) {
    SpeedOptions so;
    so.rank = rank;
    so.repeats = speed_repeats;
    so.threads = speed_threads;
    doc["speed"] = speed_section(so);
  }
  doc["seconds"] = seconds_since(t_start);
  std::printf("\n%.0f s on %s\n", doc["seconds"].get<double>(), ember::bench::cpu_name().c_str());
  if (!a["json"].as<std::string>().empty()) {
    write_json(a["json"].as<std::string>(), doc);
    std::printf("wrote %s\n", a["json"].as<std::string>().c_str());
  }
  return 0;
}

}  // namespace ember::study
