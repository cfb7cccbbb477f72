#include "framework/train/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "framework/train/io/atomic_write.h"

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

int64_t IdxArray::numel() const { return ember::numel(dims); }

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
  // A zero size makes the count 0 whatever the other sizes are; the strides of the tensor made
  // from it must still fit in 64 bits, so (0, 4294967295, 4294967295) is refused here, by name.
  try {
    contiguous_strides(a.dims);
  } catch (const Error&) {
    throw Error(str("IDX ", what, ": header declares shape ", shape,
                    ", whose per-item size overflows 64 bits (corrupt header; expected e.g. (N, 28, 28))"));
  }
  a.payload.assign(b.begin() + long(header), b.end());
  return a;
}

namespace {

// A gzip (or plain: zlib passes those through) file read in pieces, so that callers bound how
// much is inflated by what they expect instead of inflating a bomb whole.
class GzStream {
 public:
  explicit GzStream(const std::string& path) : path_(path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> probe(std::fopen(path.c_str(), "rb"), &std::fclose);
    EMBER_CHECK(probe, "cannot open '", path, "': ", std::strerror(errno));
    probe.reset();
    f_.reset(gzopen(path.c_str(), "rb"));
    EMBER_CHECK(f_, "cannot open '", path, "' through zlib");
  }
  // Appends up to n bytes to out; fewer only at the end of the stream.
  size_t append(std::vector<uint8_t>& out, size_t n) {
    size_t total = 0;
    while (total < n) {
      const unsigned want = unsigned(std::min<size_t>(n - total, size_t(1) << 20));
      const size_t at = out.size();
      out.resize(at + want);
      int got = gzread(f_.get(), out.data() + at, want);
      out.resize(at + size_t(std::max(got, 0)));
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(f_.get(), &code);
        throw Error(str("'", path_, "': corrupt gzip data (zlib: ", msg ? msg : "unknown error", ")"));
      }
      if (got == 0) break;
      total += size_t(got);
    }
    return total;
  }
  // gzread returns 0 both at a clean end and when the stream stops early; gzerror tells them apart.
  void check_clean_end() {
    int code = 0;
    const char* msg = gzerror(f_.get(), &code);
    EMBER_CHECK(code == Z_OK || code == Z_STREAM_END, "'", path_, "': corrupt or truncated gzip data (zlib: ",
                msg ? msg : "unknown error", ")");
  }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, GzCloser> f_;
};

std::string bad_alloc_message(const std::string& path) {
  return str("'", path, "': not enough memory to read it (corrupt sizes in its header, or a file too large)");
}

}  // namespace

std::vector<uint8_t> read_gzip_file(const std::string& path, size_t max_bytes) {
  try {
    GzStream in(path);
    std::vector<uint8_t> out;
    in.append(out, max_bytes);
    std::vector<uint8_t> extra;
    EMBER_CHECK(in.append(extra, 1) == 0, "'", path, "': decompresses to more than ", max_bytes, " bytes");
    in.check_clean_end();
    return out;
  } catch (const std::bad_alloc&) {
    throw Error(bad_alloc_message(path));
  }
}

IdxArray read_idx(const std::string& path, size_t max_bytes) {
  const std::string what = "'" + path + "'";
  try {
    GzStream in(path);
    // The header first (4 bytes, then 4 per dimension); parse_idx names whatever is short or wrong.
    std::vector<uint8_t> bytes;
    in.append(bytes, 4);
    if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0 || type_size(bytes[2]) == 0 || bytes[3] == 0)
      return parse_idx(bytes, what);
    const size_t ndim = bytes[3], header = 4 + 4 * ndim;
    in.append(bytes, header - 4);
    if (bytes.size() < header) return parse_idx(bytes, what);
    // Inflate no more than the header declares (plus one byte, to notice a longer stream), so a
    // small file that inflates to gigabytes stops at the size its header admits to.
    uint64_t count = type_size(bytes[2]);
    for (size_t d = 0; d < ndim; ++d) {
      const uint64_t n = read_be(bytes.data() + 4 + 4 * d, 4);
      count = (n != 0 && count > std::numeric_limits<uint64_t>::max() / n) ? std::numeric_limits<uint64_t>::max()
                                                                            : count * n;
    }
    EMBER_CHECK(count <= max_bytes && header <= max_bytes - count, "IDX ", what, ": header declares ", count, " data bytes, more than the ",
                max_bytes, "-byte limit of this reader (corrupt header?)");
    in.append(bytes, size_t(count) + 1);
    if (bytes.size() == header + count) {  // all the data: reading on checks the gzip trailer (CRC, length)
      std::vector<uint8_t> extra;
      in.append(extra, 1);
      in.check_clean_end();
    } else if (bytes.size() < header + count) {
      in.check_clean_end();  // a corrupt stream says so before parse_idx calls the file short
    }
    return parse_idx(bytes, what);  // a longer or shorter payload is refused there, with the sizes
  } catch (const std::bad_alloc&) {
    throw Error(bad_alloc_message(path));
  }
}

namespace {
// The gzip stream of `raw` (zlib's deflate with a gzip wrapper), built in memory so that the file
// itself goes through write_file_atomic.
std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& raw) {
  EMBER_CHECK(raw.size() < (uint64_t(1) << 32), "write_idx: ", raw.size(), " bytes are too many to gzip in one piece");
  z_stream z{};
  EMBER_CHECK(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
              "write_idx: cannot start gzip");
  std::vector<uint8_t> out(deflateBound(&z, uLong(raw.size())) + 32);
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = uInt(raw.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  EMBER_CHECK(rc == Z_STREAM_END, "write_idx: gzip failed (zlib code ", rc, ")");
  return out;
}
}  // namespace

void write_idx(const std::string& path, const IdxArray& a, bool gzip) {
  EMBER_CHECK(type_size(a.type_code) != 0, "write_idx: unknown element type code ", int(a.type_code));
  EMBER_CHECK(!a.dims.empty() && a.dims.size() < 256, "write_idx: need 1 to 255 dimensions, got ", a.dims.size());
  const int64_t need = checked_bytes(a.numel(), type_size(a.type_code), "write_idx");
  EMBER_CHECK(a.payload.size() == uint64_t(need), "write_idx: payload has ", a.payload.size(),
              " bytes, the shape needs ", need);
  std::vector<uint8_t> bytes = {0, 0, a.type_code, uint8_t(a.dims.size())};
  for (int64_t d : a.dims) {
    EMBER_CHECK(d >= 0 && d <= int64_t(std::numeric_limits<uint32_t>::max()), "write_idx: dimension ", d, " out of range");
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(uint8_t(uint64_t(d) >> s));
  }
  bytes.insert(bytes.end(), a.payload.begin(), a.payload.end());
  if (gzip) bytes = gzip_bytes(bytes);
  io::write_file_atomic(path, bytes);
}

}  // namespace ember::data
