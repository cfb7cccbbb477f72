// bench_cnn_step: the time of one training step of train_classifier's CNN (--model cnn), split
// into forward (model and loss), backward and optimizer (AdamW), as medians over --steps steps
// after --warmup steps, on a random batch. bench_cnn_torch.py times the same step in PyTorch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <vector>

#include "cnn_model.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "framework/optim/adam.h"
#include "framework/parallel.h"
#include "ops/loss/cross_entropy.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_cnn_step", "Times forward, backward and optimizer of one CNN training step.");
  options.add_options()("batch-size", "images per step", cxxopts::value<int64_t>()->default_value("128"))(
      "steps", "timed steps", cxxopts::value<int64_t>()->default_value("30"))(
      "warmup", "untimed steps first", cxxopts::value<int64_t>()->default_value("5"))(
      "threads", "OpenMP threads", cxxopts::value<int64_t>()->default_value("2"))("h,help", "show this help");
  try {
    auto r = cli::parse(options, argc, argv);
    if (r.count("help")) {
      std::cout << options.help();
      return 0;
    }
    const int64_t batch = cli::flag<int64_t>(r, "batch-size", 1, 1 << 16);
    const int64_t steps = cli::flag<int64_t>(r, "steps", 1, 1 << 20), warmup = cli::flag<int64_t>(r, "warmup", 0, 1 << 20);
    set_num_threads(int(cli::flag<int64_t>(r, "threads", 1, cli::kMaxThreads)));
    auto model = examples::make_cnn({});
    optim::AdamOptions ao;
    ao.lr = 1e-3;
    ao.weight_decay = 0.01;
    optim::AdamW opt(model->parameters(), ao);
    Generator gen(1);
    Tensor x = randn({batch, 784}, DType::Float32, &gen), y = randint({batch}, 0, 10, &gen);
    std::vector<double> fwd, bwd, upd;
    for (int64_t s = 0; s < warmup + steps; ++s) {
      auto t0 = Clock::now();
      Tensor loss = cross_entropy((*model)(x), y);
      loss.item();
      double f = ms_since(t0);
      t0 = Clock::now();
      opt.zero_grad();
      loss.backward();
      double b = ms_since(t0);
      t0 = Clock::now();
      opt.step();
      double u = ms_since(t0);
      if (s >= warmup) fwd.push_back(f), bwd.push_back(b), upd.push_back(u);
    }
    // Multiply-adds of the two convolutions per image (forward); backward does twice that.
    const double macs = 28.0 * 28 * 32 * 9 + 14.0 * 14 * 64 * 32 * 9;
    const double f = bench::median(fwd), b = bench::median(bwd), u = bench::median(upd);
    std::printf("{\"framework\": \"ember\", \"threads\": %d, \"batch\": %lld, \"forward_ms\": %.3f, \"backward_ms\": %.3f, "
                "\"optimizer_ms\": %.3f, \"step_ms\": %.3f, \"conv_gflop_per_step\": %.3f}\n",
                num_threads(), (long long)batch, f, b, u, f + b + u, 2 * 3 * macs * double(batch) / 1e9);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cnn_step: error: %s\n", e.what());
    return 1;
  }
}
