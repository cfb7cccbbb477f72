// gpt2 quality: what int8 and bf16 weights cost in quality. The same model is loaded once per
// format and quantised; each scores the same held-out windows (perplexity) and continues the same
// prompts greedily, and the tokens are compared with float32's.
#include <cmath>
#include <cxxopts.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "framework/core/autograd/trace.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/text_data.h"
#include "ops/quant/quant_linear.h"

namespace ember::gpt2::cli {

int quality(int argc, char** argv) {
  cxxopts::Options o("gpt2 quality",
                     "Perplexity on held-out text and greedy tokens of one GPT-2 with f32, bf16 and int8 weights "
                     "(GPT2::quantize), on the validation part of a text folder (the split of gpt2 train). Without "
                     "--model, a random-weight model at the shapes of --config (its perplexity is near the vocabulary "
                     "size; only the agreement between formats means anything then).");
  o.add_options()("model", "model folder, e.g. one written by gpt2 train", cxxopts::value<std::string>())(
      "config", "preset shapes for random weights when --model is not given",
      cxxopts::value<std::string>()->default_value("gpt2"))(
      "data", "folder of text files (its held-out 10%, as gpt2 train splits it)",
      cxxopts::value<std::string>()->default_value("/usr/share/games/fortunes"))(
      "windows", "held-out windows scored", cxxopts::value<int64_t>()->default_value("16"))(
      "context", "bytes per window (at most the model's context)", cxxopts::value<int64_t>()->default_value("128"))(
      "prompts", "greedy continuations compared", cxxopts::value<int64_t>()->default_value("8"))(
      "new-tokens", "tokens per continuation", cxxopts::value<int64_t>()->default_value("32"))(
      "int8-decode", "int8 kernel for 1 to 3 rows (the decode steps): widen or dots (as gpt2 bench)",
      cxxopts::value<std::string>()->default_value("dots"))(
      "json", "write the results as JSON", cxxopts::value<std::string>())("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  const int64_t windows = ember::cli::flag<int64_t>(a, "windows", 1, 1 << 20);
  const int64_t context = ember::cli::flag<int64_t>(a, "context", 2, kMaxPositions);
  const int64_t prompts = ember::cli::flag<int64_t>(a, "prompts", 0, 1 << 16);
  const int64_t new_tokens = ember::cli::flag<int64_t>(a, "new-tokens", 1, kMaxPositions);
  const std::string int8_decode = a["int8-decode"].as<std::string>();
  EMBER_CHECK(int8_decode == "widen" || int8_decode == "dots", "--int8-decode: expected widen or dots, got '",
              int8_decode, "'");
  quant::set_int8_decode_kernel(int8_decode == "dots" ? quant::QuantKernel::Avx2IntDots : quant::QuantKernel::Avx2FewRows);
  const std::string json_path = a.count("json") ? ember::cli::output_path("--json", a["json"].as<std::string>()) : "";
  auto load = [&] {
    auto m = a.count("model") ? load_model(a["model"].as<std::string>())
                              : std::make_unique<GPT2>(Config::preset(a["config"].as<std::string>()));
    m->eval();
    return m;
  };
  const TextCorpus data = TextCorpus::from_fortunes(a["data"].as<std::string>());
  autograd::NoGradGuard ng;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<int64_t>> f32_tokens;
  double f32_loss = 0;
  std::cout << "format  loss (nats/token)  perplexity  vs f32   greedy tokens equal to f32  first difference (mean)\n";
  for (quant::WeightFormat f : {quant::WeightFormat::Float32, quant::WeightFormat::BFloat16, quant::WeightFormat::Int8Block32}) {
    auto model = load();
    model->quantize(f);
    const Config& cfg = model->config();
    EMBER_CHECK(context <= cfg.n_positions, "--context ", context, " exceeds the model's ", cfg.n_positions, " positions");
    EMBER_CHECK(cfg.vocab_size >= 256, "gpt2 quality feeds bytes as token ids; the model's vocabulary has only ",
                cfg.vocab_size, " tokens");
    Generator gen(12345);  // the same windows and prompts for every format
    double loss = 0;
    for (int64_t w = 0; w < windows; ++w) {
      auto [x, y] = data.batch(true, 1, context, gen);
      loss += lm_loss(model->forward(x), y).item();
    }
    loss /= double(windows);
    int64_t equal = 0, total = 0;
    double first_diff = 0;
    std::vector<std::vector<int64_t>> tokens;
    for (int64_t p = 0; p < prompts; ++p) {
      auto [x, y] = data.batch(true, 1, 16, gen);
      SamplingOptions s;
      s.max_new_tokens = std::min(new_tokens, cfg.n_positions - 16);
      tokens.push_back(generate(*model, x.to_vector<int64_t>(), s));
      if (f == quant::WeightFormat::Float32) continue;
      const auto &ref = f32_tokens[size_t(p)], &got = tokens.back();
      size_t first = ref.size();
      for (size_t i = 0; i < ref.size(); ++i) {
        if (ref[i] == got[i]) ++equal;
        else if (first == ref.size()) first = i;
        ++total;
      }
      first_diff += double(first);
    }
    if (f == quant::WeightFormat::Float32) {
      f32_tokens = tokens;
      f32_loss = loss;
    }
    nlohmann::json row = {{"weights", quant::format_name(f)}, {"loss", loss}, {"perplexity", std::exp(loss)},
                          {"decode_weight_bytes", model->decode_weight_bytes()}};
    std::cout << std::left << std::setw(8) << quant::format_name(f) << std::setw(19) << std::setprecision(5) << loss
              << std::setw(12) << std::exp(loss) << std::setw(9)
              << str(std::setprecision(3), std::fixed, 100.0 * (std::exp(loss) / std::exp(f32_loss) - 1), "%");
    if (f != quant::WeightFormat::Float32 && total > 0) {
      row["greedy_equal_fraction"] = double(equal) / double(total);
      row["first_difference_mean"] = first_diff / double(prompts);
      std::cout << std::setw(28) << str(equal, " / ", total) << first_diff / double(prompts) << " of " << tokens[0].size();
    }
    std::cout << std::defaultfloat << "\n";
    rows.push_back(row);
  }
  if (!json_path.empty())
    ember::bench::write_json(json_path, {{"model", a.count("model") ? a["model"].as<std::string>() : "random " + a["config"].as<std::string>()},
                                         {"cpu", ember::bench::cpu_name()}, {"windows", windows}, {"context", context},
                                         {"prompts", prompts}, {"int8_decode", int8_decode}, {"rows", rows}});
  return 0;
}

}  // namespace ember::gpt2::cli
