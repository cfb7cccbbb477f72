// Hugging Face GPT-2 folders: config.json, model.safetensors, vocab.json, merges.txt.
#pragma once
#include <memory>
#include <string>

#include "models/gpt2/model.h"
#include "models/gpt2/tokenizer.h"

namespace ember::gpt2 {

// Reads config.json and model.safetensors. Keys may carry the "transformer." prefix; the causal
// mask buffers ("attn.bias", "attn.masked_bias") are skipped; lm_head.weight, when present, must
// equal the tied token embedding's shape. Every parameter must be present with its exact shape:
// the error names the missing or mis-shaped tensor. Weights stored as F16 or BF16 (as recent Hugging
// Face checkpoints ship) are converted to float32 on load: the model computes in float32.
std::unique_ptr<GPT2> load_model(const std::string& dir);
// Writes config.json and model.safetensors (without the prefix, as Hugging Face saves GPT2Model
// weights), atomically; the tokenizer files are copied by the caller when it has them.
void save_model(const GPT2& model, const std::string& dir);

}  // namespace ember::gpt2
