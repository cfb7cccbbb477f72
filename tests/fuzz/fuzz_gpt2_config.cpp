// GPT-2 config.json text: from_json_string accepts it (within every cap) or raises ember::Error.
#include <cstdlib>

#include "fuzz_util.h"
#include "models/gpt2/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    ember::gpt2::Config c = ember::gpt2::Config::from_json_string(std::string(reinterpret_cast<const char*>(data), size));
    if (c.n_embd > ember::gpt2::kMaxEmbd || c.n_layer > ember::gpt2::kMaxLayers || c.n_embd % c.n_head != 0) std::abort();
    ember::gpt2::Config::from_json_string(c.to_json_string());  // what it writes, it reads back
  });
  return 0;
}
