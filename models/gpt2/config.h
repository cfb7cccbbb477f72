// GPT-2's hyper-parameters, read from a Hugging Face config.json or taken from a preset.
#pragma once
#include <cstdint>
#include <string>

namespace ember::gpt2 {

// Caps on what a config.json may declare, each far above every published GPT-2 (gpt2-xl: 48
// layers, 25 heads, width 1600, 50257 tokens, 1024 positions) and far below sizes whose tensors
// could not be allocated, so a hostile or mistyped config fails by name before any allocation.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxEmbd = 65536;
constexpr int64_t kMaxVocab = int64_t(1) << 21;      // 2,097,152 tokens
constexpr int64_t kMaxPositions = int64_t(1) << 20;  // 1,048,576 positions (n_positions and n_ctx)

struct Config {
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;  // the longest context the position table covers
  double layer_norm_epsilon = 1e-5;
  // Biases in every Conv1D and LayerNorm (GPT-2's); false is nanoGPT's bias=False.
  bool bias = true;
  // The MLP's GELU in Hugging Face's names: "gelu_new" or "gelu_pytorch_tanh" (the tanh form,
  // GPT-2's), or "gelu" (the exact erf form, nanoGPT's nn.GELU()).
  std::string activation_function = "gelu_new";
  bool exact_gelu() const { return activation_function == "gelu"; }

  int64_t head_dim() const { return n_embd / n_head; }
  // ember::Error when a value is out of range (the caps above), n_embd % n_head != 0 or the
  // activation is not one of the three GELU names.
  void validate() const;

  // "gpt2" (124M), "gpt2-medium", "gpt2-large", "gpt2-xl"; ember::Error for another name.
  static Config preset(const std::string& name);
  static Config from_json_file(const std::string& path);
  static Config from_json_string(const std::string& text);
  std::string to_json_string() const;  // Hugging Face's keys, so other tools read it too
};

}  // namespace ember::gpt2
