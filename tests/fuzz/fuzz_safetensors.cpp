// safetensors bytes: parse_safetensors must accept them or raise ember::Error.
#include "framework/train/io/safetensors.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] { ember::io::parse_safetensors(std::vector<uint8_t>(data, data + size), "fuzz"); });
  return 0;
}
