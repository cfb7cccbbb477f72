#include "framework/train/io/npy.h"

#include <cstring>
#include <fstream>

#include "framework/train/io/atomic_write.h"
#include "framework/train/io/npy_header.h"

namespace ember {
namespace {

// Appends up to n bytes from f; fewer only at the end of the stream.
void read_up_to(std::istream& f, std::string& out, size_t n) {
  const size_t kChunk = size_t(1) << 20;  // grow as bytes arrive, not by what a header promises
  while (n > 0 && f) {
    const size_t want = std::min(n, kChunk), old = out.size();
    out.resize(old + want);
    f.read(&out[old], std::streamsize(want));
    const size_t got = size_t(f.gcount());
    out.resize(old + got);
    n -= got;
    if (got < want) break;
  }
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t_in) {
  Tensor t = t_in.detach().to(Device::CPU).contiguous();
  const std::string header = npy::file_header(t.dtype(), t.shape());
  io::write_file_atomic_streamed(path, [&](const io::ByteSink& sink) {
    sink(header.data(), header.size());
    sink(t.raw_data(), size_t(t.numel()) * itemsize(t.dtype()));
  });
}

// Reads only what the preamble and header promise, checking the magic first: a device such as
// /dev/zero or an endless pipe is refused after 12 bytes instead of being read to the end.
Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK(f.good(), "load_npy: cannot open '", path, "'");
  std::string bytes;
  read_up_to(f, bytes, 10);
  npy::Preamble pre = npy::parse_preamble(bytes, path);
  if (pre.header_offset == 0) {
    read_up_to(f, bytes, 2);
    pre = npy::parse_preamble(bytes, path);
    EMBER_CHECK(pre.header_offset != 0, "load_npy: '", path, "' is truncated inside its preamble");
  }
  read_up_to(f, bytes, pre.header_offset + pre.header_bytes - bytes.size());
  EMBER_CHECK(bytes.size() == pre.header_offset + pre.header_bytes, "load_npy: '", path, "' is truncated inside its header");
  const npy::Header h = npy::parse_header(bytes.substr(pre.header_offset), path);
  read_up_to(f, bytes, size_t(h.data_bytes) + 1);  // one byte more shows a file longer than promised
  return parse_npy(bytes, path);
}

Tensor parse_npy(const std::string& bytes, const std::string& path) {
  const npy::Preamble pre = npy::parse_preamble(bytes, path);
  EMBER_CHECK(pre.header_offset != 0, "load_npy: '", path, "' is truncated inside its preamble");
  EMBER_CHECK(pre.header_offset + pre.header_bytes <= bytes.size(), "load_npy: '", path, "' is truncated inside its header");
  const npy::Header h = npy::parse_header(bytes.substr(pre.header_offset, pre.header_bytes), path);
  const size_t start = pre.header_offset + pre.header_bytes;
  EMBER_CHECK(bytes.size() - start == uint64_t(h.data_bytes), "load_npy: '", path, "' holds ", bytes.size() - start,
              " data bytes, its header promises ", h.data_bytes, " for shape ", to_string(h.shape));
  Tensor t = empty(h.shape, h.dtype);
  if (h.data_bytes) std::memcpy(t.raw_data(), bytes.data() + start, size_t(h.data_bytes));
  if (h.dtype == DType::Bool) {  // any nonzero byte is true; a C++ bool must hold exactly 0 or 1
    uint8_t* p = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
  }
  return t;
}

}  // namespace ember
