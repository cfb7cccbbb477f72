// Fixtures shared by the GPT-2 tests: a tiny model config and a byte-level vocabulary.
#pragma once
#include <string>

#include "models/gpt2/config.h"
#include "models/gpt2/tokenizer.h"

namespace ember::gpt2::testing {

// 2 layers, 2 heads, width 16, 37 tokens, 24 positions: builds and runs in milliseconds.
inline Config tiny_config() {
  Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.vocab_size = 37;
  c.n_positions = 24;
  return c;
}

// vocab.json with the 256 byte symbols as ids 0..255, then `extra` (already JSON: "\"tok\":id,...").
inline std::string byte_vocab(const std::string& extra) {
  std::string vocab = "{";
  const auto& b2u = byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    std::string s = b2u[size_t(b)];
    if (s == "\"" || s == "\\") s = "\\" + s;
    vocab += (b ? "," : "") + std::string("\"") + s + "\":" + std::to_string(b);
  }
  return vocab + (extra.empty() ? "" : "," + extra) + "}";
}

}  // namespace ember::gpt2::testing
