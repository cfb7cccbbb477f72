// contextual_sparsity: the Deja Vu study (Liu et al. 2023). Does a small, input-dependent subset
// of a layer's neurons (or attention heads) give nearly the layer's whole output?
//   classifier  the Fashion-MNIST MLP: accuracy when each hidden layer keeps only its top-k units
//   gpt         a GPT-2 folder: MLP and head sparsity, static baselines, a learned predictor, speed
//   speed       the gathered sparse MLP against the dense one at GPT-2 124M shapes
//   head-speed  one token's attention step computing k of the heads against the dense step
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>

#include "common.h"
#include "framework/core/error.h"

namespace {
const char* kUsage =
    "usage: contextual_sparsity <command> [options]   (contextual_sparsity <command> --help for its options)\n"
    "\n"
    "commands:\n"
    "  classifier  Fashion-MNIST MLP: top-k hidden units per input vs static and random k (accuracy, agreement)\n"
    "  gpt         a GPT-2 folder: MLP neurons and attention heads kept per token (oracle, static, random,\n"
    "              learned low-rank predictor), perplexity against k, then the speed section\n"
    "  speed       wall-clock of the gathered sparse MLP against the dense MLP at GPT-2 124M shapes\n"
    "  head-speed  wall-clock of one token's attention step (KV cache) computing only k of the heads\n"
    "\n"
    "Every command prints tables and, with --json PATH, writes its results; plot_sparsity.py draws them.\n";
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "classifier") return ember::study::classifier(argc - 1, argv + 1);
    if (cmd == "gpt") return ember::study::gpt(argc - 1, argv + 1);
    if (cmd == "speed") return ember::study::speed(argc - 1, argv + 1);
    if (cmd == "head-speed") return ember::study::head_speed(argc - 1, argv + 1);
    std::fprintf(stderr, "contextual_sparsity: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "contextual_sparsity %s: %s (see --help)\n", cmd.c_str(), e.what());
    return 2;
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "contextual_sparsity %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
