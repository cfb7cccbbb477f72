// The .npy preamble and header (NumPy's format versions 1.0 to 3.0): the magic "\x93NUMPY", a
// version, the header's length (2 bytes in 1.0, 4 in 2.0 and 3.0), and the header itself, a Python
// dict literal with exactly the keys 'descr', 'fortran_order' and 'shape', padded with spaces and
// ended by a newline. The dict is parsed by a small grammar (not searched for substrings), so an
// unknown, missing or repeated key, or anything that is not such a literal, is refused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "framework/core/shape.h"
#include "framework/core/dtype.h"

namespace ember::npy {

constexpr size_t kMaxHeaderBytes = 1 << 20;  // far above a 64-dimension header; bounds hostile ones

struct Preamble {
  int version = 1;
  size_t header_offset = 0;  // where the dict starts: 10 in version 1.0, 12 after
  size_t header_bytes = 0;
};

// Reads the preamble from the first bytes of a file: needs 10 bytes (12 for version 2.0 and 3.0;
// returns header_offset 0 when `first` is too short to tell). Checks the magic before anything else.
Preamble parse_preamble(const std::string& first, const std::string& path);

struct Header {
  DType dtype = DType::Float32;
  Shape shape;
  int64_t data_bytes = 0;  // what the shape and dtype promise, checked against overflow
};

// Parses the header dict (the bytes after the preamble, padding and newline included).
Header parse_header(const std::string& dict, const std::string& path);

// Preamble and padded header for a C-ordered array: version 1.0 when the header fits its 2-byte
// length, else version 2.0 (never a truncated length).
std::string file_header(DType dtype, const Shape& shape);

}  // namespace ember::npy
