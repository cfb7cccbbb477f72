// IDX files as read from disk, gzip-compressed or plain, through read_idx with a small limit so
// that a gzip bomb is refused quickly: the bound on inflation is what is under test.
#include "framework/train/data/idx.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = ember::fuzz::scratch_path(".idx.gz");
  ember::fuzz::write_file(path, data, size);
  ember::fuzz::refused_ok([&] { ember::data::read_idx(path, size_t(1) << 22); });
  return 0;
}
