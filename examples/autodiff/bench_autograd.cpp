// bench_autograd: what recording costs. A chain of thousands of tiny recorded adds and muls through
// make_vjp and one backward pass (per-op overhead: the kernels do almost nothing), and a small MLP
// step (784-256-10, batch 128, relu, cross-entropy), each beside PyTorch eager measured in the same run by
// bench_autograd_torch.py. Warm-up, repeats, median.
#include <cxxopts.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <thread>

#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "ember.h"
#include "framework/core/parallel.h"
#include "examples/common/peer_python.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class F>
double median_seconds(F&& f, int warmup, int repeats) {
  return bench::measure(f, {warmup, repeats, repeats, std::numeric_limits<double>::infinity()}).median_s;
}

Tensor chain(Tensor y, const Tensor& a, const Tensor& b, int ops) {
  for (int k = 0; k < ops; ++k) y = k % 2 == 0 ? y + a : y * b;
  return y;
}



void progress(const char* what) { std::cerr << "  measuring " << what << "...\n"; }

nlohmann::json run_torch(const std::string& python, const std::string& script, const cxxopts::ParseResult& a) {
  // The peer's OPENBLAS_CORETYPE (for it alone): examples/common/openblas_core.h's choice.
  const ember::bench::peer::PythonPeer& pp = ember::bench::peer::cached_python_peer(python);
  std::cerr << "peer: " << pp.summary() << "\n";
  std::string cmd = pp.prefix() + " " + python + " " + script +
                    " --ops " + std::to_string(ember::cli::flag<int>(a, "ops", 1, 10000000)) + " --size " + std::to_string(ember::cli::flag<int>(a, "size", 1, 1 << 30)) +
                    " --repeats " + std::to_string(ember::cli::flag<int>(a, "repeats", 1, 1000000)) + " --warmup " +
                    std::to_string(ember::cli::flag<int>(a, "warmup", 0, 1000000)) + " --mlp-repeats " + std::to_string(ember::cli::flag<int>(a, "mlp-repeats", 1, 1000000)) +
                    " --threads " + std::to_string(ember::cli::flag<int>(a, "threads", 0, ember::cli::kMaxThreads));
  FILE* p = popen(cmd.c_str(), "r");
  EMBER_CHECK(p, "cannot run ", cmd);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  EMBER_CHECK(rc == 0, "the PyTorch peer failed (exit ", rc, "): ", cmd);
  return nlohmann::json::parse(out);
}

// One round of Ember measurements: the chain (plain, recorded forward, backward, both) and the MLP.
nlohmann::json measure_ember(int ops, int size, int reps, int warm, int mreps, int batch) {
  nlohmann::json e;
  Tensor x = uniform({size}, 0.5, 1.5), a = full({size}, 1e-3), b = full({size}, 1.0001), g = ones({size});
  progress("Ember chain");
  e["chain_plain_s"] = median_seconds([&] { chain(x, a, b, ops); }, warm, reps);
  auto f = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{chain(in[0], in[1], in[2], ops)}; };
  std::optional<VjpFunction> vjp;
  e["chain_forward_s"] = median_seconds([&] { vjp = make_vjp(f, {x, a, b}).second; }, warm, reps);
  std::vector<double> bt;
  std::vector<Tensor> grads;
  for (int r = 0; r < warm + reps; ++r) {
    vjp = make_vjp(f, {x, a, b}).second;  // a fresh graph each time, as PyTorch needs
    auto t0 = Clock::now();
    grads = (*vjp)({g});
    if (r >= warm) bt.push_back(seconds_since(t0));
  }
  e["chain_backward_s"] = bench::median(bt);
  vjp.reset();
  e["chain_total_s"] = median_seconds([&] { make_vjp(f, {x, a, b}).second({g}); }, warm, reps);
  e["chain_grad_a"] = grads[1].at({0});
  // What the recorded chain keeps alive in tensor storage (node objects themselves are not counted).
  int64_t base = memory_stats().current_bytes;
  {
    auto kept = make_vjp(f, {x, a, b});
    e["chain_saved_bytes"] = memory_stats().current_bytes - base;
  }

  progress("Ember MLP");
  Tensor xb = rand({batch, 784}), target = randint({batch}, 0, 10);
  std::vector<Tensor> params = {normal({784, 256}, 0, 0.05), zeros({256}), normal({256, 10}, 0, 0.05), zeros({10})};
  auto loss = [&](const std::vector<Tensor>& p) {
    Tensor h = relu(matmul(xb, p[0]) + p[1]);
    return cross_entropy(matmul(h, p[2]) + p[3], target);
  };
  {
    int64_t before = memory_stats().current_bytes;
    auto kept = make_vjp([&](const std::vector<Tensor>& p) { return std::vector<Tensor>{loss(p)}; }, params);
    e["mlp_saved_bytes"] = memory_stats().current_bytes - before;
  }
  auto step = value_and_grads(loss);
  e["mlp_step_s"] = median_seconds([&] { step(params); }, warm, mreps);
  e["mlp_forward_s"] = median_seconds([&] { loss(params); }, warm, mreps);

  return e;
}

// Keeps, per timing, the smaller of the best so far and this round's.
void keep_best(nlohmann::json& best, const nlohmann::json& round) {
  for (auto it = round.begin(); it != round.end(); ++it) {
    bool timing = it.key().size() > 2 && it.key().compare(it.key().size() - 2, 2, "_s") == 0;
    if (!best.contains(it.key()) || (timing && it.value().get<double>() < best[it.key()].get<double>()))
      best[it.key()] = it.value();
  }
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("bench_autograd",
                        "Per-recorded-op overhead of Ember's autograd (a chain of tiny adds and muls through make_vjp "
                        "and one backward pass) and a 784-256-10 MLP step, beside PyTorch eager in the same run.");
  opts.add_options()("ops", "recorded ops in the chain", cxxopts::value<int>()->default_value("2000"))(
      "size", "elements per tensor in the chain", cxxopts::value<int>()->default_value("4"))(
      "repeats", "timed repeats (the median is reported)", cxxopts::value<int>()->default_value("21"))(
      "warmup", "untimed runs first", cxxopts::value<int>()->default_value("3"))(
      "mlp-repeats", "timed MLP steps", cxxopts::value<int>()->default_value("21"))(
      "rounds", "Ember and PyTorch take turns this many times; the best round's median counts",
      cxxopts::value<int>()->default_value("3"))(
      "batch", "MLP batch size", cxxopts::value<int>()->default_value("128"))(
      "no-torch", "skip the PyTorch peer")(
      "python", "the Python with torch", cxxopts::value<std::string>()->default_value(ember::bench::peer::default_python()))(
      "threads", "threads for both: Ember's OpenMP pool and torch.set_num_threads",
      cxxopts::value<int>()->default_value("2"))(
      "torch-script", "the peer script",
      cxxopts::value<std::string>()->default_value(EMBER_AUTODIFF_DIR "/bench_autograd_torch.py"))(
      "json", "write the results as JSON to this path", cxxopts::value<std::string>())("h,help", "show this help");
  try {
    auto args = ember::cli::parse(opts, argc, argv);
    // The results file is checked now: a missing folder fails before the run, not after it.
    if (args.count("json")) ember::cli::output_path("--json", args["json"].as<std::string>());
    if (args.count("help")) {
      std::cout << opts.help() << "\n";
      return 0;
    }
    const int ops = ember::cli::flag<int>(args, "ops", 1, 10000000), size = ember::cli::flag<int>(args, "size", 1, 1 << 30), reps = ember::cli::flag<int>(args, "repeats", 1, 1000000),
              warm = ember::cli::flag<int>(args, "warmup", 0, 1000000), mreps = ember::cli::flag<int>(args, "mlp-repeats", 1, 1000000), batch = ember::cli::flag<int>(args, "batch", 1, 1 << 20);
    EMBER_CHECK(ops > 0 && size > 0 && reps > 0 && warm >= 0 && mreps > 0 && batch > 0,
                "--ops, --size, --repeats, --mlp-repeats and --batch must be positive");
    EMBER_CHECK(ember::cli::flag<int>(args, "threads", 0, ember::cli::kMaxThreads) > 0, "--threads must be positive");
#ifdef _OPENMP
    omp_set_num_threads(ember::cli::flag<int>(args, "threads", 0, ember::cli::kMaxThreads));
#endif
    std::cerr << "bench_autograd on " << ember::bench::cpu_name() << ", " << num_threads() << " OpenMP threads\n";

    // Ember and the peer take turns, round after round, and each figure is the best round's median:
    // the machine is shared, and a round that another process disturbed should not decide a ratio.
    const int rounds = ember::cli::flag<int>(args, "rounds", 1, 1000000);
    EMBER_CHECK(rounds > 0, "--rounds must be positive");
    nlohmann::json e, t;
    std::string load_before = ember::bench::load_average();
    for (int r = 0; r < rounds; ++r) {
      std::cerr << "round " << r + 1 << " of " << rounds << "\n";
      keep_best(e, measure_ember(ops, size, reps, warm, mreps, batch));
      if (!args.count("no-torch")) {
        progress("PyTorch eager (same shapes, same repeats)");
        keep_best(t, run_torch(args["python"].as<std::string>(), args["torch-script"].as<std::string>(), args));
      }
    }

    // The table: per-op numbers are the chain's time divided by its length.
    auto us_per_op = [&](const nlohmann::json& j, const char* k) { return j[k].get<double>() / ops * 1e6; };
    std::printf("\nCPU: %s; Ember: %d OpenMP threads; PyTorch: %s, %s threads\n", ember::bench::cpu_name().c_str(), num_threads(),
                t.empty() ? "not run" : t["peer"].get<std::string>().c_str(),
                t.empty() ? "-" : std::to_string(t["threads"].get<int>()).c_str());
    std::string load_after = ember::bench::load_average();
    std::printf("load average (1 min) before / after: %s / %s on %d cores\n", load_before.c_str(), load_after.c_str(),
                int(std::thread::hardware_concurrency()));
    std::printf("chain of %d recorded ops (alternating add and mul) on float32[%d], median of %d, best of %d rounds\n\n", ops,
                size, reps, rounds);
    std::printf("%-36s %12s %12s %10s\n", "per op (microseconds)", "Ember", "PyTorch", "Ember/PT");
    const char* rows[][2] = {{"unrecorded op (no autograd)", "chain_plain_s"},
                             {"recorded op, forward (make_vjp)", "chain_forward_s"},
                             {"backward, per recorded op", "chain_backward_s"},
                             {"forward + backward, per op", "chain_total_s"}};
    nlohmann::json table;
    for (auto& r : rows) {
      double ev = us_per_op(e, r[1]);
      if (t.empty()) {
        std::printf("%-36s %12.3f %12s %10s\n", r[0], ev, "-", "-");
      } else {
        double tv = us_per_op(t, r[1]);
        std::printf("%-36s %12.3f %12.3f %10.2f\n", r[0], ev, tv, ev / tv);
      }
    }
    std::printf("\nMLP 784-256-10, batch %d, float32, median of %d, best of %d rounds (milliseconds)\n\n", batch, mreps,
                rounds);
    std::printf("%-36s %12s %12s %10s\n", "", "Ember", "PyTorch", "Ember/PT");
    for (auto& r : {std::pair{"forward only (no recording)", "mlp_forward_s"}, std::pair{"forward + backward", "mlp_step_s"}}) {
      double ev = e[r.second].get<double>() * 1e3;
      if (t.empty()) std::printf("%-36s %12.3f %12s %10s\n", r.first, ev, "-", "-");
      else {
        double tv = t[r.second].get<double>() * 1e3;
        std::printf("%-36s %12.3f %12.3f %10.2f\n", r.first, ev, tv, ev / tv);
      }
    }
    std::printf("\nmemory the recorded graph keeps alive (tensor storage, Ember): chain %.1f KiB (%.0f bytes per op), "
                "MLP %.1f KiB; each node also costs sizeof(Node) = %zu bytes plus its parents array and VJP closure\n",
                e["chain_saved_bytes"].get<double>() / 1024, e["chain_saved_bytes"].get<double>() / ops,
                e["mlp_saved_bytes"].get<double>() / 1024, sizeof(autograd::Node));
    if (!t.empty()) {
      double ratio = e["chain_total_s"].get<double>() / t["chain_total_s"].get<double>();
      std::printf("\nper-op overhead (forward + backward): Ember is %.2fx PyTorch's (goal: at most 0.50x) -> %s\n", ratio,
                  ratio <= 0.5 ? "met" : "NOT met");
      double ga = e["chain_grad_a"].get<double>(), gt = t["chain_grad_a"].get<double>();
      EMBER_CHECK(std::abs(ga - gt) <= 1e-3 * std::abs(gt), "Ember and PyTorch disagree on the gradient (",
                  ga, " vs ", gt, "): the two chains are not the same computation");
    }
    if (args.count("json")) {
      bench::write_json(args["json"].as<std::string>(),
                        {{"cpu", ember::bench::cpu_name()}, {"ops", ops}, {"size", size}, {"batch", batch}, {"load_before", load_before},
                         {"load_after", load_after}, {"ember", e}, {"pytorch", t}});
    }
  } catch (const std::exception& ex) {
    std::cerr << "bench_autograd: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
