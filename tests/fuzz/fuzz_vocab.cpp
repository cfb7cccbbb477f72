// vocab.json text (with no merges): the tokenizer loads it or raises ember::Error; a loaded one
// decodes every id it has and encodes what it decodes.
#include "fuzz_util.h"
#include "models/gpt2/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    auto t = ember::gpt2::Tokenizer::from_strings(std::string(reinterpret_cast<const char*>(data), size), "");
    for (int64_t id = 0; id < t.vocab_size() && id < 64; ++id) ember::fuzz::refused_ok([&] { t.encode(t.token(id)); });
  });
  return 0;
}
