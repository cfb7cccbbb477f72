// --bias and --gelu for gpt2 train and train-step: GPT-2's structure (biases, tanh GELU) by
// default, or nanoGPT's train.py defaults (bias=False, exact nn.GELU()) for a like-for-like run.
#pragma once
#include <string>

#include "framework/core/error.h"

namespace ember::gpt2::cli {

inline constexpr const char* kBiasHelp =
    "true (default, GPT-2's) or false: biases in every linear layer and LayerNorm, or none (nanoGPT's bias=False)";
inline constexpr const char* kGeluHelp =
    "tanh (default, GPT-2's gelu_new) or exact: the MLP's GELU, tanh approximation or erf form (nanoGPT's nn.GELU())";

// true or false; ember::Error naming the flag and the accepted values otherwise.
inline bool parse_bias(const std::string& s) {
  if (s == "true") return true;
  if (s == "false") return false;
  throw Error(str("--bias: got '", s, "', expected true or false"));
}

// The config's activation_function for --gelu: tanh -> "gelu_new", exact -> "gelu".
inline std::string parse_gelu(const std::string& s) {
  if (s == "tanh") return "gelu_new";
  if (s == "exact") return "gelu";
  throw Error(str("--gelu: got '", s, "', expected tanh or exact"));
}

}  // namespace ember::gpt2::cli
