#include "framework/train/io/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ember {
namespace {
const char kMagic[] = "\x93NUMPY";

const char* descr(DType t) {
  switch (t) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "";
}
}  // namespace

void save_npy(const std::string& path, const Tensor& t_in) {
  Tensor t = t_in.detach().to(Device::CPU).contiguous();
  std::ostringstream shape;
  shape << "(";
  for (int64_t i = 0; i < t.dim(); ++i) shape << t.shape()[size_t(i)] << (t.dim() == 1 || i + 1 < t.dim() ? "," : "");
  shape << ")";
  std::string header = str("{'descr': '", descr(t.dtype()), "', 'fortran_order': False, 'shape': ", shape.str(), ", }");
  size_t total = 10 + header.size() + 1;  // magic(6) version(2) length(2), header, newline
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    EMBER_CHECK(f.good(), "save_npy: cannot write '", tmp, "'");
    f.write(kMagic, 6);
    f.put(char(1));
    f.put(char(0));
    uint16_t len = uint16_t(header.size());
    f.put(char(len & 0xFF));
    f.put(char(len >> 8));
    f << header;
    f.write(static_cast<const char*>(t.raw_data()), std::streamsize(size_t(t.numel()) * itemsize(t.dtype())));
    EMBER_CHECK(f.good(), "save_npy: writing '", tmp, "' failed");
  }
  EMBER_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "save_npy: cannot rename '", tmp, "' to '", path, "'");
}

Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK(f.good(), "load_npy: cannot open '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_npy(bytes, path);
}

Tensor parse_npy(const std::string& bytes, const std::string& path) {
  EMBER_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, kMagic, 6) == 0, "load_npy: '", path, "' is not a .npy file");
  EMBER_CHECK(bytes[6] == 1, "load_npy: '", path, "' uses .npy format version ", int(bytes[6]), ", expected 1");
  size_t hlen = size_t(static_cast<unsigned char>(bytes[8])) | (size_t(static_cast<unsigned char>(bytes[9])) << 8);
  EMBER_CHECK(10 + hlen <= bytes.size(), "load_npy: '", path, "' is truncated inside its header");
  std::string header = bytes.substr(10, hlen);
  DType dtype;
  if (header.find("'<f4'") != std::string::npos) dtype = DType::Float32;
  else if (header.find("'<f8'") != std::string::npos) dtype = DType::Float64;
  else if (header.find("'<i8'") != std::string::npos) dtype = DType::Int64;
  else if (header.find("'|b1'") != std::string::npos) dtype = DType::Bool;
  else throw Error(str("load_npy: '", path, "' has an unsupported dtype (expected <f4, <f8, <i8 or |b1): ", header));
  EMBER_CHECK(header.find("'fortran_order': False") != std::string::npos, "load_npy: '", path,
              "' is Fortran-ordered; save it C-ordered");
  size_t lp = header.find('('), rp = header.find(')');
  EMBER_CHECK(lp != std::string::npos && rp != std::string::npos && rp > lp, "load_npy: '", path, "' has no shape");
  Shape shape;
  std::stringstream ss(header.substr(lp + 1, rp - lp - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    // Whitespace alone (the empty item after a trailing comma, also across a line break) is no entry.
    if (item.find_first_not_of(" \t\n\r") == std::string::npos) continue;
    // strtoll rather than sscanf: it reports an entry too large for int64 instead of wrapping it.
    const size_t b = item.find_first_not_of(" \t\n\r"), e = item.find_last_not_of(" \t\n\r");
    const std::string digits = item.substr(b, e - b + 1);
    char* end = nullptr;
    errno = 0;
    const long long d = std::strtoll(digits.c_str(), &end, 10);
    EMBER_CHECK(end == digits.c_str() + digits.size() && errno == 0 && d >= 0, "load_npy: '", path,
                "' has a bad shape entry '", digits, "' (expected a non-negative integer below 2^63)");
    shape.push_back(d);
  }
  // Checked products: a shape such as (274177, 67280421310721) multiplies to 2^64 + 1, which would
  // wrap to 1 element and let a 4-byte data section pass for a huge tensor.
  int64_t need = 0;
  try {
    contiguous_strides(shape);
    need = checked_bytes(numel(shape), itemsize(dtype), "load_npy");
  } catch (const Error& err) {
    throw Error(str("load_npy: '", path, "' declares shape ", to_string(shape), ", too large to hold: ", err.what()));
  }
  EMBER_CHECK(bytes.size() - 10 - hlen == uint64_t(need), "load_npy: '", path, "' holds ", bytes.size() - 10 - hlen,
              " data bytes, its header promises ", need, " for shape ", to_string(shape));
  Tensor t = empty(shape, dtype);
  if (need) std::memcpy(t.raw_data(), bytes.data() + 10 + hlen, size_t(need));
  if (dtype == DType::Bool) {  // any nonzero byte is true; a C++ bool must hold exactly 0 or 1
    uint8_t* p = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
  }
  return t;
}

}  // namespace ember
