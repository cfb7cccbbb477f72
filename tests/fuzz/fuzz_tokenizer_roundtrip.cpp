// Any bytes as text: encode never fails on a complete byte vocabulary, and decode(encode(x)) == x.
#include <cstdlib>

#include "fuzz_util.h"
#include "models/gpt2/tokenizer.h"

namespace {
ember::gpt2::Tokenizer make() {
  std::string v = "{";
  const auto& b2u = ember::gpt2::byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    std::string s = b2u[size_t(b)];
    if (s == "\"" || s == "\\") s = "\\" + s;
    v += (b ? "," : "") + std::string("\"") + s + "\":" + std::to_string(b);
  }
  const std::string sp = b2u[' '];
  v += ",\"he\":256,\"ll\":257,\"hell\":258,\"" + sp + "w\":259,\"<|endoftext|>\":260}";
  return ember::gpt2::Tokenizer::from_strings(v, "#version: 0.2\nh e\nl l\nhe ll\n" + sp + " w\n");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ember::gpt2::Tokenizer tok = make();
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (tok.decode(tok.encode(text)) != text) std::abort();  // ember::Error here escapes: also a finding
  return 0;
}
