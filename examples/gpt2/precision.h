// --precision for gpt2 train and train-step: fp32, or bf16 under an autocast scope (matmuls and
// attention in bfloat16, norms, softmax and the loss in float32; weights, gradients, AdamW's state
// and checkpoints stay float32).
#pragma once
#include <string>

#include "framework/core/error.h"

namespace ember::gpt2::cli {

inline constexpr const char* kPrecisionHelp =
    "fp32 (default) or bf16: bf16 runs the forward pass under autocast (matmul, linear and attention in "
    "bfloat16; layer norm, softmax and the loss in float32); weights, gradients, AdamW state and "
    "checkpoints stay float32. On a CPU without native bf16 arithmetic it is slower (the casts are extra work)";

// True for bf16, false for fp32; ember::Error naming the flag and the accepted values otherwise.
inline bool parse_bf16(const std::string& s) {
  if (s == "fp32") return false;
  if (s == "bf16") return true;
  throw Error(str("--precision: got '", s, "', expected fp32 or bf16"));
}

}  // namespace ember::gpt2::cli
