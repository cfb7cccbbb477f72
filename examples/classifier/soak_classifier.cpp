// soak_classifier: the long-run stability check (README, Reliability). Trains the Fashion-MNIST
// MLP epoch after epoch for --minutes, with a validation pass and a checkpoint write after each
// epoch, and prints the process's RSS and the caching allocator's bytes every --report-seconds.
// After the warm-up (the first --warmup-fraction of the run, at least one epoch), memory must stay
// within --rss-growth-mib / --held-growth-mib of its warm-up maximum, or the run fails (exit 1).
// Samples are taken between steps, where no step's temporaries are alive, so that every sample
// sees the same working set.
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <vector>

#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "examples/common/memory_watch.h"
#include "framework/core/autograd/trace.h"
#include "framework/train/data/data_loader.h"
#include "framework/train/data/fashion_mnist.h"
#include "framework/train/io/checkpoint.h"
#include "framework/train/nn/mlp.h"
#include "framework/train/optim/adam.h"
#include "ops/loss/cross_entropy.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

void print_sample(const cli::MemorySample& s, int64_t epoch, int64_t step, double loss, const char* phase) {
  const double mib = 1024.0 * 1024.0;
  std::printf("%8.0f s  epoch %4lld  step %8lld  loss %.4f  RSS %8.1f MiB  held %7.1f MiB (in use %6.1f, cached %6.1f)"
              "  allocations %lld  %s\n",
              s.seconds, (long long)epoch, (long long)step, loss, double(s.rss) / mib, double(s.held()) / mib,
              double(s.in_use) / mib, double(s.cached) / mib, (long long)s.allocations, phase);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  cxxopts::Options o("soak_classifier",
                     "Long-run memory check: trains the Fashion-MNIST MLP for --minutes, printing RSS and the caching "
                     "allocator's held bytes, and fails if either grows past its warm-up maximum.");
  o.add_options()("data", "Fashion-MNIST folder", cxxopts::value<std::string>()->default_value(data::kFashionMnistDir))(
      "minutes", "how long to train", cxxopts::value<double>()->default_value("30"))(
      "report-seconds", "seconds between memory lines", cxxopts::value<double>()->default_value("60"))(
      "warmup-fraction", "the part of the run that sets the baseline (at least one epoch)",
      cxxopts::value<double>()->default_value("0.2"))(
      "rss-growth-mib", "MiB RSS may grow past its warm-up maximum", cxxopts::value<double>()->default_value("16"))(
      "held-growth-mib", "MiB the allocator's held bytes may grow past theirs", cxxopts::value<double>()->default_value("1"))(
      "hidden", "hidden layer sizes", cxxopts::value<std::string>()->default_value("256,128"))(
      "batch-size", "examples per step", cxxopts::value<int64_t>()->default_value("128"))(
      "limit", "training images to use (0: all)", cxxopts::value<int64_t>()->default_value("0"))(
      "threads", "OpenMP threads (0: OMP_NUM_THREADS or all cores)", cxxopts::value<int64_t>()->default_value("1"))(
      "out", "folder for the per-epoch checkpoint (default: a temporary folder, removed at the end)",
      cxxopts::value<std::string>()->default_value(""))(
      "leak-kib-per-step", "keep this many KiB alive per step: a deliberate leak, to see the check fail",
      cxxopts::value<int64_t>()->default_value("0"))("h,help", "show this help");
  auto a = cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\nExample: scripts/soak.sh 30   (or soak_classifier --minutes 3 --report-seconds 15)\n";
    return 0;
  }
  using cli::flag;
  const double minutes = flag<double>(a, "minutes", 1e-3, 1e5, "a positive number of minutes");
  const double report = flag<double>(a, "report-seconds", 0.1, 86400, "seconds from 0.1 to 86400");
  const double warm_fraction = flag<double>(a, "warmup-fraction", 0.0, 0.9, "a fraction from 0 to 0.9");
  const double mib = 1024.0 * 1024.0;
  cli::GrowthLimits limits;
  limits.rss = int64_t(flag<double>(a, "rss-growth-mib", 0, 1e6) * mib);
  limits.held = int64_t(flag<double>(a, "held-growth-mib", 0, 1e6) * mib);
  std::vector<int64_t> hidden = cli::int_list(a["hidden"].as<std::string>(), "--hidden", "layer sizes such as 256,128");
  for (int64_t h : hidden) cli::in_range<int64_t>("--hidden", h, 1, 1 << 16, "layer sizes from 1 to 65536");
  const int64_t batch = flag<int64_t>(a, "batch-size", 1, 1 << 16), limit = flag<int64_t>(a, "limit", 0, int64_t(1) << 32);
  const int64_t threads = flag<int64_t>(a, "threads", 0, cli::kMaxThreads);
  const int64_t leak_kib = flag<int64_t>(a, "leak-kib-per-step", 0, 1 << 20);
  if (threads > 0) omp_set_num_threads(int(threads));

  data::FashionMnistOptions dopt;
  dopt.dir = a["data"].as<std::string>();
  dopt.limit = limit;
  auto full = data::load_fashion_mnist(true, dopt);
  auto [train, val] = data::random_split(full, full->size() - full->size() / 10, 7);
  std::vector<int64_t> sizes = {full->inputs().size(1)};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(10);
  nn::MLPOptions mopt;
  mopt.seed = 1;
  auto model = nn::make_mlp(sizes, mopt);
  optim::AdamOptions ao;
  ao.lr = 1e-3;
  optim::AdamW opt(model->parameters(), ao);
  data::DataLoader loader(train, {batch, true, true, 1});
  data::DataLoader val_loader(val, {512, false, false, 0});
  EMBER_CHECK(loader.num_batches() > 0, "--batch-size ", batch, " is larger than the training set (", train->size(), ")");

  namespace fs = std::filesystem;
  const bool own_dir = a["out"].as<std::string>().empty();
  const fs::path dir = own_dir ? fs::temp_directory_path() / ("ember_soak_" + std::to_string(::getpid()))
                               : fs::path(a["out"].as<std::string>());
  fs::create_directories(dir);
  const std::string ckpt = (dir / "checkpoint.safetensors").string();

  std::printf("soak_classifier: %s, %lld training images, %.1f minutes, memory every %.0f s; warm-up %.0f%% of the run\n",
              model->describe().c_str(), (long long)train->size(), minutes, report, 100 * warm_fraction);
  const auto t0 = Clock::now();
  auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::vector<cli::MemorySample> warm;
  std::vector<Tensor> leaked;
  std::string problem;
  double next_report = 0, last_loss = 0;
  int64_t step = 0, epoch = 0, reports = 0;
  bool done = false;
  for (; !done; ++epoch) {
    for (const data::Batch& b : loader.epoch(epoch)) {
      // Between steps: this step's graph is not built yet and the last one's is freed.
      const double t = since();
      if (t >= next_report || t >= minutes * 60) {
        cli::MemorySample s = cli::sample_memory(t);
        const bool warming = t < warm_fraction * minutes * 60 || epoch == 0;
        if (warming) {
          warm.push_back(s);
        } else {
          const std::string p = cli::memory_growth(warm, s, limits);
          if (!p.empty() && problem.empty()) problem = str("at ", t, " s: ", p);
        }
        print_sample(s, epoch, step, last_loss, warming ? "warm-up" : problem.empty() ? "ok" : "GROWN");
        ++reports;
        next_report = t + report;
        if (t >= minutes * 60) {
          done = true;
          break;
        }
      }
      Tensor loss = cross_entropy((*model)(b.inputs), b.targets);
      opt.zero_grad();
      loss.backward();
      opt.step();
      last_loss = loss.item();
      ++step;
      if (leak_kib > 0) leaked.push_back(zeros({leak_kib * 256}, DType::Float32));
    }
    if (done) break;
    {
      autograd::NoGradGuard ng;
      model->eval();
      for (const data::Batch& b : val_loader.epoch(0)) (void)cross_entropy((*model)(b.inputs), b.targets).item();
      model->train();
    }
    io::save_checkpoint(ckpt, *model, opt, step, {{"epoch", std::to_string(epoch + 1)}});
  }
  if (own_dir) fs::remove_all(dir);
  EMBER_CHECK(!warm.empty() && reports > int64_t(warm.size()), "soak_classifier: the run ended during its warm-up (",
              warm.size(), " samples); give more --minutes or a smaller --warmup-fraction");
  if (!problem.empty()) {
    std::fprintf(stderr, "soak_classifier: memory grew after the warm-up, %s\n", problem.c_str());
    return 1;
  }
  std::printf("soak_classifier: %lld steps, %lld epochs in %.0f s; memory flat after the warm-up (%lld samples compared)\n",
              (long long)step, (long long)epoch, since(), (long long)(reports - int64_t(warm.size())));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak_classifier: %s\n", e.what());
    return 2;
  }
}
