// IDX bytes in memory: parse_idx, then the conversions the dataset loader applies.
#include "framework/train/data/idx.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::refused_ok([&] {
    ember::data::IdxArray a = ember::data::parse_idx(std::vector<uint8_t>(data, data + size), "fuzz");
    a.to_float(1.0 / 255);
    if (a.type_code != 0x0D && a.type_code != 0x0E) a.to_int64();
  });
  return 0;
}
