// safetensors bytes: parse_safetensors must accept them (every tensor in at most 64 dimensions)
// or raise ember::Error.
#include <cstdlib>

#include "framework/core/max_rank.h"
#include "framework/train/io/safetensors.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    const auto st = ember::io::parse_safetensors(std::vector<uint8_t>(data, data + size), "fuzz");
    for (const auto& [name, t] : st.tensors)
      if (t.dim() > ember::kMaxRank) std::abort();
  });
  return 0;
}
