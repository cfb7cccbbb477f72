// gpt2: generate text, tokenize, train a small GPT, and benchmark the KV cache.
#include <cstring>
#include <iostream>

#include "commands.h"
#include "examples/common/cli_lists.h"
#include "framework/train/dist/communicator.h"
#include "framework/core/error.h"

namespace ember::gpt2::cli {

std::vector<int64_t> parse_ids(const std::string& s) {
  std::vector<int64_t> ids = ember::cli::int_list(s, "--ids", "comma-separated token ids such as 15496,11,995");
  EMBER_CHECK(!ids.empty(), "--ids: no token ids given");
  return ids;
}

std::string join_ids(const std::vector<int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

}  // namespace ember::gpt2::cli

namespace {
const char* kUsage =
    "usage: gpt2 <command> [options]   (gpt2 <command> --help for each command's options)\n"
    "\n"
    "commands:\n"
    "  generate   continue a prompt with a GPT-2 model folder (greedy, or sampled with --temperature)\n"
    "  tokenize   print the token ids of a text, or decode ids back to text\n"
    "  train      train a small GPT-2 on plain text (default: Debian's fortunes) and save it\n"
    "  bench      prefill and generation speed with and without the KV cache\n"
    "  quality    perplexity and greedy tokens with f32, bf16 and int8 weights\n"
    "  train-step time train's step stage by stage on random tokens (and print its losses)\n";
}

int main(int argc, char** argv) {
  using namespace ember::gpt2::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "generate") return generate(argc - 1, argv + 1);
    if (cmd == "tokenize") return tokenize(argc - 1, argv + 1);
    if (cmd == "train") return train(argc - 1, argv + 1);
    if (cmd == "bench") return bench(argc - 1, argv + 1);
    if (cmd == "quality") return quality(argc - 1, argv + 1);
    if (cmd == "train-step") return train_step(argc - 1, argv + 1);
    std::cerr << "gpt2: unknown command '" << cmd << "'\n\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpt2 " << cmd << ": " << e.what() << "\n";
    // Under --distributed the other ranks may wait in a collective for this one: end them all.
    if (ember::dist::initialized() && ember::dist::world().world_size() > 1) ember::dist::world().abort(1);
    return 1;
  }
}
