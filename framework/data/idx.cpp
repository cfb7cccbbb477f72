#include "framework/data/idx.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace ember::data {

namespace {

size_t type_size(uint8_t code) {
  switch (code) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
  }
  return 0;
}

uint64_t read_be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// Element k of an IDX payload as a double.
double element(const IdxArray& a, int64_t k) {
  size_t s = type_size(a.type_code);
  uint64_t bits = read_be(a.payload.data() + size_t(k) * s, s);
  switch (a.type_code) {
    case 0x08: return double(uint8_t(bits));
    case 0x09: return double(int8_t(uint8_t(bits)));
    case 0x0B: return double(int16_t(uint16_t(bits)));
    case 0x0C: return double(int32_t(uint32_t(bits)));
    case 0x0D: { float f; uint32_t u = uint32_t(bits); std::memcpy(&f, &u, 4); return f; }
    case 0x0E: { double d; std::memcpy(&d, &bits, 8); return d; }
  }
  return 0;
}

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};

}  // namespace

int64_t IdxArray::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Tensor IdxArray::to_float(double scale) const {
  Tensor t = empty(dims, DType::Float32);
  float* out = t.data<float>();
  int64_t n = numel();
  if (type_code == 0x08) {  // the common case (pixels), without the generic decode
    const float s = float(scale);
    for (int64_t k = 0; k < n; ++k) out[k] = float(payload[size_t(k)]) * s;
  } else {
    for (int64_t k = 0; k < n; ++k) out[k] = float(element(*this, k) * scale);
  }
  return t;
}

Tensor IdxArray::to_int64() const {
  EMBER_CHECK(type_code != 0x0D && type_code != 0x0E, "IDX: to_int64 needs an integer array, this one holds floats");
  Tensor t = empty(dims, DType::Int64);
  int64_t* out = t.data<int64_t>();
  for (int64_t k = 0, n = numel(); k < n; ++k) out[k] = int64_t(element(*this, k));
  return t;
}

IdxArray parse_idx(const std::vector<uint8_t>& b, const std::string& what) {
  EMBER_CHECK(b.size() >= 4, "IDX ", what, ": file too short for the 4-byte header (", b.size(), " bytes)");
  EMBER_CHECK(b[0] == 0 && b[1] == 0, "IDX ", what, ": bad magic number (the first two bytes must be zero)");
  IdxArray a;
  a.type_code = b[2];
  size_t es = type_size(a.type_code);
  EMBER_CHECK(es != 0, "IDX ", what, ": unknown element type code 0x", std::hex, int(a.type_code),
              " (expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E)");
  size_t ndim = b[3];
  EMBER_CHECK(ndim >= 1, "IDX ", what, ": zero dimensions");
  size_t header = 4 + 4 * ndim;
  EMBER_CHECK(b.size() >= header, "IDX ", what, ": file too short for ", ndim, " dimension sizes (", b.size(), " bytes)");
  // Sizes multiply in 64 bits; the product must not exceed what the file can hold.
  uint64_t count = 1;
  const uint64_t avail = (b.size() - header) / es;
  for (size_t d = 0; d < ndim; ++d) {
    uint64_t n = read_be(b.data() + 4 + 4 * d, 4);
    a.dims.push_back(int64_t(n));
    count = (n != 0 && count > std::numeric_limits<uint64_t>::max() / n) ? std::numeric_limits<uint64_t>::max()
                                                                          : count * n;  // saturates; checked below
  }
  std::string shape = to_string(Shape(a.dims));
  EMBER_CHECK(count <= avail, "IDX ", what, ": header declares shape ", shape, " but the file holds only ", avail,
              " elements (truncated or corrupt)");
  EMBER_CHECK(b.size() == header + count * es, "IDX ", what, ": header declares shape ", shape, " (", count * es,
              " data bytes) but the file has ", b.size() - header, " data bytes (corrupt)");
  a.payload.assign(b.begin() + long(header), b.end());
  return a;
}

std::vector<uint8_t> read_gzip_file(const std::string& path, size_t max_bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> probe(std::fopen(path.c_str(), "rb"), &std::fclose);
  EMBER_CHECK(probe, "cannot open '", path, "': ", std::strerror(errno));
  probe.reset();
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  EMBER_CHECK(f, "cannot open '", path, "' through zlib");
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 16);
  for (;;) {
    int got = gzread(f.get(), chunk.data(), unsigned(chunk.size()));
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f.get(), &code);
      throw Error(str("'", path, "': corrupt gzip data (zlib: ", msg ? msg : "unknown error", ")"));
    }
    if (got == 0) break;
    EMBER_CHECK(out.size() + size_t(got) <= max_bytes, "'", path, "': decompresses to more than ", max_bytes, " bytes");
    out.insert(out.end(), chunk.begin(), chunk.begin() + got);
  }
  // gzread returns 0 both at a clean end and when the stream stops early; gzerror tells them apart.
  int code = 0;
  const char* msg = gzerror(f.get(), &code);
  EMBER_CHECK(code == Z_OK || code == Z_STREAM_END, "'", path, "': corrupt or truncated gzip data (zlib: ",
              msg ? msg : "unknown error", ")");
  return out;
}

IdxArray read_idx(const std::string& path) { return parse_idx(read_gzip_file(path), "'" + path + "'"); }

void write_idx(const std::string& path, const IdxArray& a, bool gzip) {
  EMBER_CHECK(type_size(a.type_code) != 0, "write_idx: unknown element type code ", int(a.type_code));
  EMBER_CHECK(!a.dims.empty() && a.dims.size() < 256, "write_idx: need 1 to 255 dimensions, got ", a.dims.size());
  EMBER_CHECK(a.payload.size() == size_t(a.numel()) * type_size(a.type_code), "write_idx: payload has ",
              a.payload.size(), " bytes, the shape needs ", size_t(a.numel()) * type_size(a.type_code));
  std::vector<uint8_t> bytes = {0, 0, a.type_code, uint8_t(a.dims.size())};
  for (int64_t d : a.dims) {
    EMBER_CHECK(d >= 0 && d <= int64_t(std::numeric_limits<uint32_t>::max()), "write_idx: dimension ", d, " out of range");
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(uint8_t(uint64_t(d) >> s));
  }
  bytes.insert(bytes.end(), a.payload.begin(), a.payload.end());
  if (gzip) {
    std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "wb"));
    EMBER_CHECK(f, "write_idx: cannot create '", path, "'");
    EMBER_CHECK(gzwrite(f.get(), bytes.data(), unsigned(bytes.size())) == int(bytes.size()), "write_idx: write to '", path, "' failed");
    EMBER_CHECK(gzclose(f.release()) == Z_OK, "write_idx: closing '", path, "' failed");
  } else {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    EMBER_CHECK(f, "write_idx: cannot create '", path, "'");
    EMBER_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size(), "write_idx: write to '", path, "' failed");
  }
}

}  // namespace ember::data
