#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "examples/attention/study/study_kernels.h"
#include "examples/common/cli_flags.h"
#include "framework/core/autograd/trace.h"
#include "framework/train/io/npy.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"

namespace ember::gpt2::cli {

int generate(int argc, char** argv) {
  cxxopts::Options o("gpt2 generate",
                     "Continue a prompt with a GPT-2 model folder (config.json, model.safetensors, vocab.json, "
                     "merges.txt). Greedy unless --temperature is given; tokens are printed as they come.");
  o.add_options()("model", "model folder", cxxopts::value<std::string>())(
      "prompt", "prompt text", cxxopts::value<std::string>())(
      "ids", "prompt as comma-separated token ids instead of text", cxxopts::value<std::string>())(
      "max-new-tokens", "tokens to generate", cxxopts::value<int64_t>()->default_value("32"))(
      "temperature", "sampling temperature (0: greedy)", cxxopts::value<double>()->default_value("0"))(
      "top-k", "sample among the k most likely tokens (0: all)", cxxopts::value<int64_t>()->default_value("0"))(
      "top-p", "nucleus sampling mass", cxxopts::value<double>()->default_value("1"))(
      "seed", "random seed for sampling", cxxopts::value<uint64_t>()->default_value("0"))(
      "no-cache", "recompute the whole prefix every step instead of using the KV cache")(
      "attention", "attention algorithm: flash2 (FlashAttention-2 order), flash (the paper's Algorithm 1) or standard",
      cxxopts::value<std::string>()->default_value("flash2"))(
      "weights",
      "weight format for inference: f32 (as loaded), bf16 (bfloat16, 2 bytes per weight) or int8 (blocks of 32 "
      "int8 values with a float16 scale, 1.06 bytes per weight); the linear layers and the tied LM head are "
      "quantised after loading (examples/gpt2/WEIGHTS.md)",
      cxxopts::value<std::string>()->default_value("f32"))(
      "print-ids", "print the generated token ids on one line instead of text")(
      "dump-logits", "write the logits of every position of the input as a float32 (T x vocab) .npy file and exit",
      cxxopts::value<std::string>())("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  EMBER_CHECK(a.count("model"), "--model DIR is required");
  EMBER_CHECK(a.count("prompt") + a.count("ids") == 1, "give exactly one of --prompt TEXT or --ids 15496,11,...");
  // Every numeric flag is checked before the model is loaded (examples/common/cli_flags.h).
  SamplingOptions s;
  s.max_new_tokens = ember::cli::flag<int64_t>(a, "max-new-tokens", 0, kMaxPositions);
  s.temperature = ember::cli::flag<double>(a, "temperature", 0, 100, "0 (greedy) to 100");
  s.top_k = ember::cli::flag<int64_t>(a, "top-k", 0, kMaxVocab, str("0 (all) to ", kMaxVocab));
  s.top_p = ember::cli::flag<double>(a, "top-p", 1e-9, 1, "a probability mass in (0, 1]");
  s.seed = a["seed"].as<uint64_t>();
  s.use_cache = !a.count("no-cache");
  const quant::WeightFormat weights = quant::parse_format(a["weights"].as<std::string>());
  const std::string dump = a.count("dump-logits") ? ember::cli::output_path("--dump-logits", a["dump-logits"].as<std::string>()) : "";
  std::string dir = a["model"].as<std::string>();
  auto model = load_model(dir);
  model->eval();
  model->quantize(weights);
  attention_study::register_attention_study_kernels();  // "flash" and "standard" beside the library's flash2
  model->set_attention_impl(a["attention"].as<std::string>());
  bool have_tokenizer = std::filesystem::exists(dir + "/vocab.json");
  std::unique_ptr<Tokenizer> tok;
  if (have_tokenizer) {
    tok = std::make_unique<Tokenizer>(Tokenizer::from_dir(dir));
    tok->check_covers(model->config().vocab_size, dir + "/vocab.json");  // now, not at the first unknown id
  }
  std::vector<int64_t> prompt;
  if (a.count("ids")) {
    prompt = parse_ids(a["ids"].as<std::string>());
  } else {
    EMBER_CHECK(tok, "--prompt needs vocab.json and merges.txt in ", dir, " (or pass --ids)");
    prompt = tok->encode(a["prompt"].as<std::string>());
  }
  const int64_t context = model->config().n_positions, room = context - int64_t(prompt.size());
  EMBER_CHECK(room >= 0, "the prompt (", prompt.size(), " tokens) is longer than the model's context (", context, ")");
  EMBER_CHECK(a.count("dump-logits") || s.max_new_tokens <= room, "--max-new-tokens: ", s.max_new_tokens,
              " does not fit the model's context (expected at most ", room, ": n_positions ", context, " minus the ",
              prompt.size(), "-token prompt)");
  if (a.count("dump-logits")) {
    autograd::NoGradGuard ng;
    Tensor logits = model->forward(from_vector(prompt, {1, int64_t(prompt.size())}));
    save_npy(dump, logits.reshape({int64_t(prompt.size()), -1}));
    std::cerr << "wrote logits of " << prompt.size() << " positions to " << dump << "\n";
    return 0;
  }
  if (tok) s.stop_token = tok->eot_id();
  bool print_ids = a.count("print-ids") || !tok;
  if (!print_ids) std::cout << tok->decode(prompt) << std::flush;
  std::vector<int64_t> out = generate(*model, prompt, s, [&](int64_t id) {
    if (!print_ids) std::cout << tok->token(id) << std::flush;
  });
  std::cout << (print_ids ? join_ids(out) : "") << "\n";
  return 0;
}

}  // namespace ember::gpt2::cli
