// .npy bytes: parse_npy must accept them (and then hold exactly the data the header promises) or raise ember::Error.
#include <cstdlib>

#include "framework/train/io/npy.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    ember::Tensor t = ember::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (uint64_t(t.numel()) * ember::itemsize(t.dtype()) > size) std::abort();  // more data than was given
  });
  return 0;
}
