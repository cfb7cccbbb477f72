// The IDX format of MNIST and Fashion-MNIST (LeCun et al.): a big-endian header (two zero bytes,
// an element-type code, the number of dimensions, then each dimension as a 32-bit count) followed
// by the elements in row-major order. Files may be gzip-compressed (read through zlib) or plain.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::data {

struct IdxArray {
  uint8_t type_code = 0x08;      // 0x08 ubyte, 0x09 byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64
  std::vector<int64_t> dims;
  std::vector<uint8_t> payload;  // the elements as stored (big-endian for multi-byte types)

  int64_t numel() const;
  // The elements converted: float32 (scaled by `scale`, e.g. 1/255 for pixels), or int64 (labels).
  Tensor to_float(double scale = 1.0) const;
  Tensor to_int64() const;
};

// Parses an IDX file held in memory; `what` names it in error messages.
IdxArray parse_idx(const std::vector<uint8_t>& bytes, const std::string& what);
// Reads a file, gunzipping it when it starts with the gzip magic. Errors (missing file, corrupt
// gzip stream, failed CRC, truncated or inconsistent IDX data) raise ember::Error naming the path.
// It inflates no more than the header declares (a gzip bomb stops there) and never more than
// max_bytes in all; running out of memory is an ember::Error too.
IdxArray read_idx(const std::string& path, size_t max_bytes = size_t(1) << 32);
// The whole decompressed content of a gzip (or plain) file; refuses more than max_bytes.
std::vector<uint8_t> read_gzip_file(const std::string& path, size_t max_bytes = size_t(1) << 32);

// Writes an IDX array, gzip-compressed when `gzip` (tests and tools use this to make files).
void write_idx(const std::string& path, const IdxArray& a, bool gzip = true);

}  // namespace ember::data
