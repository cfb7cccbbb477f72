// `gpt2 train-step`: times the stages of gpt2 train's step (forward and loss, backward, clipping,
// AdamW, zero_grad) on random token batches, and prints each step's loss to all its digits, so that
// two builds can be timed in turns and checked to compute the same losses (scripts/train_step_ab.py).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <vector>

#include "commands.h"
#include "examples/common/cli_flags.h"
#include "framework/core/parallel.h"
#include "framework/core/random.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/param_group.h"
#include "framework/train/optim/clip_grad.h"
#include "models/gpt2/model.h"
#include "framework/core/autograd/autocast.h"
#include "precision.h"
#include "step_ceiling.h"
#include "structure.h"

namespace ember::gpt2::cli {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The ceiling's arithmetic, product by product, then the measured step's fraction of it.
void print_ceiling(const Config& cfg, int64_t batch, int64_t context, double step_ms) {
  std::vector<StepGemm> gemms;
  const int repeats = step_ms > 1000 ? 3 : 15;  // GPT-2 124M's products take seconds per step
  const Ceiling c = step_ceiling(cfg, batch, context, repeats, &gemms);
  std::printf("\nceiling at %d thread(s): each product alone with the library's matmul, median of %d\n", num_threads(),
              repeats);
  std::printf("%-32s %20s %8s %9s %9s %8s\n", "product", "[batch x] m x n x k", "per step", "ms each", "ms/step",
              "GFLOP/s");
  for (const StepGemm& g : gemms)
    std::printf("%-32s %20s %8.1f %9.4f %9.3f %8.1f\n", g.what.c_str(),
                str(g.batch > 1 ? str(g.batch, " x ") : "", g.m, "x", g.n, "x", g.k).c_str(), g.count, g.ms,
                g.ms * g.count, g.flops_per_call() / (g.ms * 1e-3) * 1e-9);
  std::printf("products: %.3f GFLOP in %.3f ms (%.1f GFLOP/s); other work: %.1f MB at %.1f GB/s copy = %.3f ms\n",
              c.gemm_gflop, c.gemm_ms, c.gemm_gflop / (c.gemm_ms * 1e-3), c.other_mb, c.copy_gbs, c.other_ms);
  std::printf("ceiling_ms %.3f step_ms %.3f fraction_of_ceiling %.3f\n", c.step_ms(), step_ms, c.step_ms() / step_ms);
}

}  // namespace

int train_step(int argc, char** argv) {
  cxxopts::Options o("gpt2 train-step", "time gpt2 train's step, stage by stage, on random tokens");
  o.add_options()("steps", "timed steps", cxxopts::value<int64_t>()->default_value("20"))(
      "warmup", "untimed steps first", cxxopts::value<int64_t>()->default_value("3"))(
      "batch", "sequences per step", cxxopts::value<int64_t>()->default_value("12"))(
      "context", "tokens per sequence", cxxopts::value<int64_t>()->default_value("64"))(
      "layers", "transformer blocks", cxxopts::value<int64_t>()->default_value("4"))(
      "heads", "attention heads", cxxopts::value<int64_t>()->default_value("4"))(
      "embd", "embedding width", cxxopts::value<int64_t>()->default_value("128"))(
      "bias", kBiasHelp, cxxopts::value<std::string>()->default_value("true"))(
      "gelu", kGeluHelp, cxxopts::value<std::string>()->default_value("tanh"))(
      "vocab", "vocabulary size", cxxopts::value<int64_t>()->default_value("257"))(
      "seed", "seed for initialisation and batches", cxxopts::value<uint64_t>()->default_value("0"))(
      "lr", "AdamW's learning rate (weight decay 0.1 on the matrices)", cxxopts::value<double>()->default_value("1e-3"))(
      "fixed-batch", "train on the first batch at every step (the loss then falls fast)")(
      "losses", "print every step's loss (%.9g)")(
      "ceiling", "also time the step's matrix products alone with the library's matmul and print the step's "
                 "ceiling: their sum plus the other work's bytes at the copy bandwidth (step_ceiling.h)")(
      "precision", kPrecisionHelp, cxxopts::value<std::string>()->default_value("fp32"))("help", "this help");
  auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  using ember::cli::flag;
  const int64_t steps = flag<int64_t>(a, "steps", 1, 1 << 20), warmup = flag<int64_t>(a, "warmup", 0, 1 << 20);
  const int64_t batch = flag<int64_t>(a, "batch", 1, 1 << 16), context = flag<int64_t>(a, "context", 2, kMaxPositions);
  const bool bf16 = parse_bf16(a["precision"].as<std::string>());
  Config cfg = model_shape(a);
  cfg.vocab_size = flag<int64_t>(a, "vocab", 2, kMaxVocab);
  cfg.n_positions = context;
  cfg.validate();
  const uint64_t seed = a["seed"].as<uint64_t>();
  GPT2 model(cfg, seed);
  optim::AdamOptions ao;
  ao.lr = flag<double>(a, "lr", 1e-12, 10, "a learning rate from 1e-12 to 10");
  optim::AdamW opt(optim::decay_matrices_only(model.parameters(), 0.1), ao);
  Generator gen(seed + 1);
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point t0, clock::time_point t1) { return std::chrono::duration<double, std::milli>(t1 - t0).count(); };
  std::vector<double> total, fwd, bwd, clip, adam, zero;
  Tensor first;  // the first batch, for --fixed-batch
  for (int64_t s = 0; s < warmup + steps; ++s) {
    Tensor tokens = a.count("fixed-batch") && first.defined() ? first : randint({batch, context + 1}, 0, cfg.vocab_size, &gen);
    if (!first.defined()) first = tokens;
    Tensor x = tokens.narrow(1, 0, context).contiguous(), y = tokens.narrow(1, 1, context).contiguous();
    const auto t0 = clock::now();
    Tensor loss = [&] {
      autocast::Guard amp(DType::BFloat16, /*enabled=*/bf16);
      return lm_loss(model.forward(x), y);
    }();
    const auto t1 = clock::now();
    loss.backward();
    const auto t2 = clock::now();
    optim::clip_grad_norm(model.parameters(), 1.0);
    const auto t3 = clock::now();
    opt.step();
    const auto t4 = clock::now();
    opt.zero_grad();
    const auto t5 = clock::now();
    if (a.count("losses")) std::printf("loss %lld %.9g\n", (long long)s, loss.item());
    if (s < warmup) continue;
    total.push_back(ms(t0, t5)), fwd.push_back(ms(t0, t1)), bwd.push_back(ms(t1, t2));
    clip.push_back(ms(t2, t3)), adam.push_back(ms(t3, t4)), zero.push_back(ms(t4, t5));
  }
  std::printf("step_ms %.3f forward_ms %.3f backward_ms %.3f clip_ms %.3f adamw_ms %.3f zero_grad_ms %.3f\n",
              median(total), median(fwd), median(bwd), median(clip), median(adam), median(zero));
  if (a.count("ceiling")) print_ceiling(cfg, batch, context, median(total));
  return 0;
}

}  // namespace ember::gpt2::cli
