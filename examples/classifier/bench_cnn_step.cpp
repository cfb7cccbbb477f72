// bench_cnn_step: the time of one training step of train_classifier's CNN (--model cnn), split
// into forward (model and loss), backward and optimizer (AdamW), as medians over --steps steps
// after --warmup steps, on a random batch. bench_cnn_torch.py times the same step in PyTorch.
// With --convs it also times each convolution alone (forward, input gradient, weight gradient) in
// GFLOP/s beside Ember's matmul on the product that im2col makes of it, the rate the convolution
// would reach if im2col, col2im and the layout changes cost nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <vector>

#include "cnn_model.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "framework/train/optim/adam.h"
#include "framework/core/parallel.h"
#include "ops/conv/conv.h"
#include "ops/loss/cross_entropy.h"
#include "ops/matmul/matmul.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The median milliseconds of f over `steps` calls after `warmup`.
template <class F>
double time_ms(int64_t warmup, int64_t steps, const F& f) {
  std::vector<double> ms;
  for (int64_t s = 0; s < warmup + steps; ++s) {
    auto t0 = Clock::now();
    f();
    if (s >= warmup) ms.push_back(ms_since(t0));
  }
  return bench::median(ms);
}

// One JSON line per convolution of the CNN: GFLOP/s of its forward and of both gradients, and of
// matmul on the im2col product (Cout x C*k*k) @ (C*k*k x N*H*W), which has the same multiply-adds.
void time_convs(int64_t batch, int64_t warmup, int64_t steps) {
  struct Layer {
    const char* name;
    int64_t c, cout, hw;
  };
  Generator gen(2);
  for (const Layer& l : {Layer{"conv1", 1, 32, 28}, Layer{"conv2", 32, 64, 14}}) {
    Tensor x = randn({batch, l.c, l.hw, l.hw}, DType::Float32, &gen);
    Tensor w = randn({l.cout, l.c, 3, 3}, DType::Float32, &gen);
    Conv2dOptions o;
    o.padding = {1, 1};
    Tensor y = conv2d(x, w, Tensor(), o);
    Tensor g = randn(y.shape(), DType::Float32, &gen);
    const double gflop = 2.0 * double(batch) * double(l.hw * l.hw) * double(l.cout) * double(l.c * 9) / 1e9;
    const double fwd = time_ms(warmup, steps, [&] { conv2d(x, w, Tensor(), o); });
    const double dx = time_ms(warmup, steps, [&] { conv2d_input_grad(g, w, x.shape(), o); });
    const double dw = time_ms(warmup, steps, [&] { conv2d_weight_grad(x, g, w.shape(), o); });
    Tensor wm = randn({l.cout, l.c * 9}, DType::Float32, &gen);
    Tensor cols = randn({l.c * 9, batch * l.hw * l.hw}, DType::Float32, &gen);
    const double mm = time_ms(warmup, steps, [&] { matmul(wm, cols); });
    std::printf("{\"framework\": \"ember\", \"threads\": %d, \"layer\": \"%s\", \"batch\": %lld, \"gflop\": %.4f, "
                "\"forward_gflops\": %.1f, \"input_grad_gflops\": %.1f, \"weight_grad_gflops\": %.1f, "
                "\"im2col_matmul_gflops\": %.1f}\n",
                num_threads(), l.name, (long long)batch, gflop, gflop / fwd * 1e3, gflop / dx * 1e3, gflop / dw * 1e3,
                gflop / mm * 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_cnn_step", "Times forward, backward and optimizer of one CNN training step.");
  options.add_options()("batch-size", "images per step", cxxopts::value<int64_t>()->default_value("128"))(
      "steps", "timed steps", cxxopts::value<int64_t>()->default_value("30"))(
      "warmup", "untimed steps first", cxxopts::value<int64_t>()->default_value("5"))(
      "threads", "OpenMP threads", cxxopts::value<int64_t>()->default_value("2"))(
      "convs", "also time each convolution alone against matmul on its im2col product")("h,help", "show this help");
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
    if (r.count("convs")) time_convs(batch, warmup, steps);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cnn_step: error: %s\n", e.what());
    return 1;
  }
}
