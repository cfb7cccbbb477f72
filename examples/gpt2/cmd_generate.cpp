#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "framework/autograd/trace.h"
#include "framework/io/npy.h"
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
      "attention", "attention algorithm: standard or flash", cxxopts::value<std::string>()->default_value("standard"))(
      "print-ids", "print the generated token ids on one line instead of text")(
      "dump-logits", "write the logits of every position of the input as a float32 (T x vocab) .npy file and exit",
      cxxopts::value<std::string>())("h,help", "show this help");
  auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  EMBER_CHECK(a.count("model"), "--model DIR is required");
  EMBER_CHECK(a.count("prompt") + a.count("ids") == 1, "give exactly one of --prompt TEXT or --ids 15496,11,...");
  std::string dir = a["model"].as<std::string>();
  auto model = load_model(dir);
  model->eval();
  model->set_attention_impl(parse_attention_impl(a["attention"].as<std::string>()));
  bool have_tokenizer = std::filesystem::exists(dir + "/vocab.json");
  std::unique_ptr<Tokenizer> tok;
  if (have_tokenizer) tok = std::make_unique<Tokenizer>(Tokenizer::from_dir(dir));
  std::vector<int64_t> prompt;
  if (a.count("ids")) {
    prompt = parse_ids(a["ids"].as<std::string>());
  } else {
    EMBER_CHECK(tok, "--prompt needs vocab.json and merges.txt in ", dir, " (or pass --ids)");
    prompt = tok->encode(a["prompt"].as<std::string>());
  }
  if (a.count("dump-logits")) {
    autograd::NoGradGuard ng;
    Tensor logits = model->forward(from_vector(prompt, {1, int64_t(prompt.size())}));
    save_npy(a["dump-logits"].as<std::string>(), logits.reshape({int64_t(prompt.size()), -1}));
    std::cerr << "wrote logits of " << prompt.size() << " positions to " << a["dump-logits"].as<std::string>() << "\n";
    return 0;
  }
  SamplingOptions s;
  s.max_new_tokens = a["max-new-tokens"].as<int64_t>();
  s.temperature = a["temperature"].as<double>();
  s.top_k = a["top-k"].as<int64_t>();
  s.top_p = a["top-p"].as<double>();
  s.seed = a["seed"].as<uint64_t>();
  s.use_cache = !a.count("no-cache");
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
