// .npy bytes: parse_npy must accept them (and then hold exactly the data the header promises, in
// at most 64 dimensions, with a header that the writer's own grammar reads back) or raise ember::Error.
#include <cstdlib>

#include "framework/core/max_rank.h"
#include "framework/train/io/npy.h"
#include "framework/train/io/npy_header.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    ember::Tensor t = ember::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (uint64_t(t.numel()) * ember::itemsize(t.dtype()) > size) std::abort();  // more data than was given
    if (t.dim() > ember::kMaxRank) std::abort();
    // What was accepted must be writable as a header that parses back to the same dtype and shape.
    const std::string h = ember::npy::file_header(t.dtype(), t.shape());
    const ember::npy::Preamble p = ember::npy::parse_preamble(h, "fuzz");
    const ember::npy::Header back = ember::npy::parse_header(h.substr(p.header_offset), "fuzz");
    if (back.dtype != t.dtype() || back.shape != t.shape()) std::abort();
  });
  return 0;
}
