// merges.txt text against GPT-2's byte vocabulary: loads or raises ember::Error; encoding a fixed
// text with the merges may refuse a merged symbol missing from the vocabulary, nothing else.
#include "fuzz_util.h"
#include "models/gpt2/tokenizer.h"

namespace {
std::string byte_vocab() {
  std::string v = "{";
  const auto& b2u = ember::gpt2::byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    std::string s = b2u[size_t(b)];
    if (s == "\"" || s == "\\") s = "\\" + s;
    v += (b ? "," : "") + std::string("\"") + s + "\":" + std::to_string(b);
  }
  return v + ",\"<|endoftext|>\":256}";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string vocab = byte_vocab();
  ember::fuzz::refused_ok([&] {
    auto t = ember::gpt2::Tokenizer::from_strings(vocab, std::string(reinterpret_cast<const char*>(data), size));
    t.encode("hello world, the quick brown fox<|endoftext|> 123");
  });
  return 0;
}
