#include <algorithm>
#include <chrono>
#include <cxxopts.hpp>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numeric>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "examples/common/bandwidth.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/progress_bar.h"
#include "framework/core/autograd/trace.h"
#include "framework/core/parallel.h"
#include "framework/core/storage.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "ops/matmul/matmul.h"
#include "ops/quant/quant_linear.h"

namespace ember::gpt2::cli {
namespace {

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out = parse_ids(s);
  for (int64_t v : out) EMBER_CHECK(v > 0, "lengths must be positive, got ", v);
  return out;
}

}  // namespace

int bench(int argc, char** argv) {
  cxxopts::Options o("gpt2 bench",
                     "Prefill time and generation speed of GPT-2 with and without the KV cache (random weights at the "
                     "shapes of --config unless --model is given). Greedy decoding; median of --repeats runs. "
                     "Each mode generates its longest length once per repeat and times every step, so the "
                     "JSON holds the latency of each step against its position; the rows for shorter lengths "
                     "are the sums of their first steps.");
  o.add_options()("model", "model folder (default: random weights)", cxxopts::value<std::string>())(
      "config", "preset shapes for random weights", cxxopts::value<std::string>()->default_value("gpt2"))(
      "prompt-len", "prompt tokens prefilled in one pass", cxxopts::value<int64_t>()->default_value("16"))(
      "lengths", "generated lengths reported with the cache (one run to the longest, timed per step)",
      cxxopts::value<std::string>()->default_value("16,32,64,128,256,512"))(
      "no-cache-lengths", "... without the cache (slow: a step re-runs the whole prefix; 512 takes minutes)",
      cxxopts::value<std::string>()->default_value("16,32,64,128,256,512"))(
      "repeats", "timed runs per point (median reported)", cxxopts::value<int>()->default_value("1"))(
      "threads", "CPU threads (0: OpenMP's default)", cxxopts::value<int>()->default_value("0"))(
      "weights", "weight format: f32, bf16 or int8 (quantised after loading; examples/gpt2/WEIGHTS.md)",
      cxxopts::value<std::string>()->default_value("f32"))(
      "int8-decode", "int8 kernel for 1 to 3 rows: widen (int8 to float32 in registers, FMAs with x) or dots "
      "(x quantised per block of 32 too, integer dot products)",
      cxxopts::value<std::string>()->default_value("dots"))(
      "json", "write the results as JSON", cxxopts::value<std::string>())("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  // Numeric flags and the output path are checked before the model is built (examples/common/cli_flags.h).
  const int threads = ember::cli::flag<int>(a, "threads", 0, int(ember::cli::kMaxThreads));
  const int repeats = ember::cli::flag<int>(a, "repeats", 1, 1000);
  const int64_t plen = ember::cli::flag<int64_t>(a, "prompt-len", 1, kMaxPositions);
  const std::string json_path = a.count("json") ? ember::cli::output_path("--json", a["json"].as<std::string>()) : "";
  const quant::WeightFormat weights = quant::parse_format(a["weights"].as<std::string>());
  const std::string int8_decode = a["int8-decode"].as<std::string>();
  EMBER_CHECK(int8_decode == "widen" || int8_decode == "dots", "--int8-decode: expected widen or dots, got '",
              int8_decode, "'");
  quant::set_int8_decode_kernel(int8_decode == "dots" ? quant::QuantKernel::Avx2IntDots : quant::QuantKernel::Avx2FewRows);
  if (threads > 0) set_num_threads(threads);
  std::unique_ptr<GPT2> model = a.count("model") ? load_model(a["model"].as<std::string>())
                                                 : std::make_unique<GPT2>(Config::preset(a["config"].as<std::string>()));
  model->eval();
  model->quantize(weights);
  const Config& cfg = model->config();
  EMBER_CHECK(plen >= 1 && plen < cfg.n_positions, "--prompt-len must be in [1, ", cfg.n_positions - 1, "], got ", plen);
  // Lengths the user asked for must fit the context (checked before any run); the defaults are
  // trimmed to what fits after the prompt, with a note.
  auto fitting = [&](const char* flag) {
    std::vector<int64_t> keep;
    for (int64_t n : parse_list(a[flag].as<std::string>())) {
      if (plen + n <= cfg.n_positions) {
        keep.push_back(n);
        continue;
      }
      EMBER_CHECK(!a.count(flag), "--", flag, ": prompt ", plen, " + ", n, " tokens exceed the context of ",
                  cfg.n_positions, " positions");
      std::cout << "(skipping the default length " << n << ": prompt " << plen << " + " << n << " > context "
                << cfg.n_positions << ")\n";
    }
    return keep;
  };
  const std::vector<int64_t> with_cache = fitting("lengths"), without_cache = fitting("no-cache-lengths");
  Generator g(3);
  Tensor prompt_t = randint({plen}, 0, cfg.vocab_size, &g);
  std::vector<int64_t> prompt = prompt_t.to_vector<int64_t>();
  autograd::NoGradGuard ng;

  auto median = [&](auto&& fn) {
    return ember::bench::measure(fn, {0, repeats, repeats, std::numeric_limits<double>::infinity()}).median_s;
  };
  // One generation of the longest length per repeat, with the seconds of every step (the time
  // between consecutive tokens; step 0 includes the prompt's pass). Returns runs[repeat][step].
  // With `floors`, the read bandwidth is probed after each generation and pushed there: on a
  // shared VM the probe moves by up to 1.5x within a minute, so each run is set against its own.
  auto sweep = [&](bool cache, int64_t n, std::vector<double>* floors) {
    std::vector<std::vector<double>> runs;
    for (int r = 0; r < repeats; ++r) {
      examples::ProgressBar bar(str("ember ", cache ? "cache" : "no cache", " ", r + 1, "/", repeats), n, true,
                                stderr, "tokens");
      std::vector<double> steps;
      SamplingOptions s;
      s.max_new_tokens = n;
      s.use_cache = cache;
      double last = ember::bench::now_s();
      generate(*model, prompt, s, [&](int64_t) {
        double t = ember::bench::now_s();
        steps.push_back(t - last);
        last = t;
        bar.update(int64_t(steps.size()), int64_t(steps.size()), str("position ", plen + int64_t(steps.size()) - 1));
        // Without the cache every step's buffers have new sizes (T grows by one), so the caching
        // allocator, which reuses blocks of equal size only, would keep every step's blocks: 23 GB
        // by position ~500. Returning them after each step costs no reuse, since none would come.
        if (!cache) allocator(Device::CPU).empty_cache();
      });
      bar.finish();
      runs.push_back(std::move(steps));
      if (floors) floors->push_back(ember::bench::measure_bandwidth(size_t(256) << 20, num_threads()).read_gbs());
    }
    return runs;
  };
  // Warm-up: one short generation so that allocator caches and threads are up.
  SamplingOptions warm;
  warm.max_new_tokens = 2;
  generate(*model, prompt, warm);

  std::cout << "gpt2 bench: " << model->name() << ", " << model->num_parameters() << " parameters, "
            << quant::format_name(weights) << " weights, on "
            << ember::bench::cpu_name() << " (" << num_threads() << " threads)\n";
  KVCache probe(cfg, 1);
  double prefill = median([&] {
    // The prefill of generation: the LM head on the last position only, as generate() and the
    // nanoGPT peer do (forward() would add 128 x 768 x 50257 multiply-adds nobody samples from).
    KVCache cache(cfg, 1, plen + 1);
    Tensor h = model->hidden(from_vector(prompt, {1, plen}), &cache);
    model->lm_head(h.slice(1, plen - 1, plen));
  });
  std::cout << std::fixed << std::setprecision(3) << "prefill of " << plen << " tokens: " << prefill << " s ("
            << std::setprecision(1) << double(plen) / prefill << " tokens/s)\n"
            << "KV cache at the full context of " << cfg.n_positions << " positions: " << std::setprecision(1)
            << double(probe.bytes()) / (1 << 20) << " MiB (2 x n_layer x n_embd x 4 bytes = "
            << 2 * cfg.n_layer * cfg.n_embd * 4 << " bytes per position)\n";
  // A cached decode step reads every weight once (the LM head is wte itself), so this machine's
  // read bandwidth puts a floor under its time: what "fast" can mean for decode here. The bytes
  // are those of the chosen format (int8: 1.0625 per weight with the scales).
  const ember::bench::Bandwidth bw = ember::bench::measure_bandwidth(size_t(256) << 20, num_threads());
  const double weight_bytes = double(model->decode_weight_bytes());
  const double floor_tps = bw.read_gbs() * 1e9 / weight_bytes;
  std::cout << ember::bench::describe(bw) << "\n"
            << "decode floor: " << std::setprecision(0) << weight_bytes / 1e6 << " MB of weights per token at "
            << std::setprecision(1) << bw.read_gbs() << " GB/s read = " << floor_tps << " tokens/s at most\n\n";
  // Step 0 includes the prompt's pass; "decode tokens/s" counts the steps after it, the rate that
  // the floor bounds (a generation of n tokens with the cache is one prefill and n - 1 such steps).
  std::cout << std::setw(10) << "generated" << std::setw(8) << "cache" << std::setw(12) << "seconds" << std::setw(12)
            << "tokens/s" << std::setw(16) << "decode tokens/s" << "\n";
  nlohmann::json rows = nlohmann::json::array(), per_step = nlohmann::json::array();
  auto run = [&](const std::vector<int64_t>& lengths, bool cache) {
    if (lengths.empty()) return;
    const double idle = ember::bench::idle_fraction();  // a busy machine stretches every step
    std::vector<double> floors_gbs;  // the read probe after each cached run
    std::vector<std::vector<double>> runs =
        sweep(cache, *std::max_element(lengths.begin(), lengths.end()), cache ? &floors_gbs : nullptr);
    for (int64_t n : lengths) {
      std::vector<double> totals, after_first;
      for (const auto& steps : runs) {
        totals.push_back(std::accumulate(steps.begin(), steps.begin() + n, 0.0));
        after_first.push_back(std::accumulate(steps.begin() + 1, steps.begin() + n, 0.0));
      }
      const double t = ember::bench::median(totals), t_decode = ember::bench::median(after_first);
      nlohmann::json row = {{"generated", n}, {"cache", cache}, {"seconds", t}, {"tokens_per_s", double(n) / t}};
      std::cout << std::setw(10) << n << std::setw(8) << (cache ? "yes" : "no") << std::setw(12) << std::setprecision(3)
                << t << std::setw(12) << std::setprecision(2) << double(n) / t;
      if (n >= 2) {
        const double decode_tps = double(n - 1) / t_decode;
        row["decode_tokens_per_s"] = decode_tps;
        std::cout << std::setw(16) << decode_tps;
        if (cache) {
          // Each run against the probe taken right after it, then the median over the runs; the
          // share against the probe at the start is kept beside it.
          std::vector<double> shares;
          for (size_t r = 0; r < runs.size(); ++r)
            shares.push_back(100.0 * double(n - 1) / after_first[r] / (floors_gbs[r] * 1e9 / weight_bytes));
          const double pct_floor = ember::bench::median(shares), pct_once = 100.0 * decode_tps / floor_tps;
          row["decode_percent_of_floor"] = pct_floor;
          row["decode_percent_of_floor_per_run"] = shares;
          row["decode_percent_of_start_floor"] = pct_once;
          std::cout << std::setw(8) << std::setprecision(0) << pct_floor << "% of the floor beside each run ("
                    << *std::min_element(shares.begin(), shares.end()) << "-"
                    << *std::max_element(shares.begin(), shares.end()) << "%; " << pct_once
                    << "% of the one above)";
        }
      }
      std::cout << "\n";
      rows.push_back(row);
    }
    std::vector<int64_t> positions;
    std::vector<double> seconds;
    for (size_t i = 0; i < runs[0].size(); ++i) {
      std::vector<double> at;
      for (const auto& steps : runs) at.push_back(steps[i]);
      positions.push_back(plen + int64_t(i));
      seconds.push_back(ember::bench::median(at));
    }
    per_step.push_back({{"cache", cache}, {"idle_before", idle}, {"positions", positions}, {"seconds", seconds}});
    if (cache) per_step.back()["read_gbs_after_each_run"] = floors_gbs;
  };
  run(with_cache, true);
  run(without_cache, false);
  if (a.count("json")) {
    nlohmann::json j = {{"model", model->name()}, {"cpu", ember::bench::cpu_name()}, {"threads", num_threads()},
                        {"weights", quant::format_name(weights)}, {"int8_decode", int8_decode},
                        {"prompt_len", plen},     {"prefill_s", prefill}, {"kv_cache_bytes_full", probe.bytes()},
                        {"rows", rows},           {"per_step", per_step},
                        {"bandwidth", ember::bench::to_json(bw)}, {"weight_bytes", weight_bytes},
                        {"decode_floor_tokens_per_s", floor_tps}};
    ember::bench::write_json(json_path, j);
  }
  return 0;
}

}  // namespace ember::gpt2::cli
