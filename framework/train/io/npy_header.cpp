#include "framework/train/io/npy_header.h"

#include <cstring>

#include "framework/core/max_rank.h"

namespace ember::npy {
namespace {

const char kMagic[] = "\x93NUMPY";

DType dtype_of(const std::string& descr, const std::string& path) {
  if (descr == "<f4") return DType::Float32;
  if (descr == "<f8") return DType::Float64;
  if (descr == "<i8") return DType::Int64;
  if (descr == "|b1") return DType::Bool;
  if (descr == "<f2") return DType::Float16;
  throw Error(str("load_npy: '", path, "' has the unsupported dtype '", descr, "' (expected <f4, <f8, <i8, |b1 or <f2)"));
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
    case DType::Float16: return "<f2";
    case DType::BFloat16: break;  // NumPy has no bfloat16 dtype
  }
  return "";
}

// A recursive-descent reader of the one dict literal a .npy header may be.
class DictParser {
 public:
  DictParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    skip_ws();
    expect('{', "the header to start with '{'");
    bool seen_descr = false, seen_order = false, seen_shape = false;
    std::string descr;
    bool fortran = false;
    Shape shape;
    skip_ws();
    while (peek() != '}') {
      const std::string key = string_literal("a quoted key");
      skip_ws();
      expect(':', "':' after the key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        fail_if(seen_descr, "repeats the key 'descr'");
        seen_descr = true;
        descr = string_literal("a quoted dtype after 'descr'");
      } else if (key == "fortran_order") {
        fail_if(seen_order, "repeats the key 'fortran_order'");
        seen_order = true;
        fortran = boolean();
      } else if (key == "shape") {
        fail_if(seen_shape, "repeats the key 'shape'");
        seen_shape = true;
        shape = tuple();
      } else {
        fail(str("has the unknown key '", key, "' (expected exactly 'descr', 'fortran_order' and 'shape')"));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else {
        fail_if(peek() != '}', "needs ',' or '}' " + where());
      }
    }
    ++pos_;
    skip_ws();
    fail_if(pos_ != s_.size(), "has bytes after its dict " + where() + " (expected only spaces and a newline)");
    fail_if(!seen_descr || !seen_order || !seen_shape,
            str("lacks the key '", !seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape", "'"));
    Header h;
    h.dtype = dtype_of(descr, path_);
    EMBER_CHECK(!fortran, "load_npy: '", path_, "' is Fortran-ordered; save it C-ordered");
    h.shape = std::move(shape);
    // Checked products: (274177, 67280421310721) multiplies to 2^64 + 1, which would wrap to one
    // element and let 4 data bytes pass for a huge tensor. The rank cap comes first.
    check_rank(h.shape.size(), ("load_npy: '" + path_ + "'").c_str());
    try {
      contiguous_strides(h.shape);
      h.data_bytes = checked_bytes(numel(h.shape), itemsize(h.dtype), "load_npy");
    } catch (const Error& err) {
      throw Error(str("load_npy: '", path_, "' declares shape ", to_string(h.shape), ", too large to hold: ", err.what()));
    }
    return h;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n\f", s_[pos_]) && s_[pos_] != '\0') ++pos_;
  }
  std::string where() const { return str("at byte ", pos_, " of the header"); }
  [[noreturn]] void fail(const std::string& what) const { throw Error(str("load_npy: '", path_, "' header ", what)); }
  void fail_if(bool bad, const std::string& what) const {
    if (bad) fail(what);
  }
  void expect(char c, const std::string& what) {
    fail_if(peek() != c, "is not a Python dict literal: expected " + what + " " + where());
    ++pos_;
  }

  std::string string_literal(const std::string& what) {
    const char q = peek();
    fail_if(q != '\'' && q != '"', "is not a Python dict literal: expected " + what + " " + where());
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      fail_if(s_[pos_] == '\\' || s_[pos_] == '\n', "has an escape or line break inside a string " + where());
      ++pos_;
    }
    fail_if(pos_ >= s_.size(), "has an unterminated string");
    return s_.substr(start, pos_++ - start);
  }

  bool boolean() {
    for (const char* word : {"True", "False"}) {
      const size_t n = std::strlen(word);
      if (s_.compare(pos_, n, word) == 0) {
        pos_ += n;
        return word[0] == 'T';
      }
    }
    fail("needs True or False after 'fortran_order' " + where());
  }

  // A Python tuple of non-negative integers: (), (3,), (2, 3) or (2, 3,).
  Shape tuple() {
    expect('(', "a tuple after 'shape'");
    Shape out;
    skip_ws();
    bool comma_after_last = false;
    while (peek() != ')') {
      const size_t start = pos_;
      while (pos_ < s_.size() && !std::strchr(" \t\r\n\f,)", s_[pos_])) ++pos_;
      const std::string entry = s_.substr(start, pos_ - start);
      int64_t d = 0;
      bool ok = !entry.empty() && entry.size() <= 19 && entry.find_first_not_of("0123456789") == std::string::npos;
      if (ok) {
        const unsigned long long v = std::stoull(entry);
        ok = v <= uint64_t(INT64_MAX);
        d = int64_t(v);
      }
      fail_if(pos_ >= s_.size(), "has an unterminated shape tuple");
      EMBER_CHECK(ok, "load_npy: '", path_, "' has a bad shape entry '", entry,
                  "' (expected a non-negative integer below 2^63)");
      out.push_back(d);
      skip_ws();
      comma_after_last = peek() == ',';
      if (comma_after_last) {
        ++pos_;
        skip_ws();
      } else {
        fail_if(peek() != ')', "needs ',' or ')' in the shape " + where());
      }
    }
    ++pos_;
    // (3) is the integer 3 in Python, not a tuple; NumPy writes (3,).
    if (out.size() == 1 && !comma_after_last)
      fail(str("has the shape (", out[0], "), which is not a tuple (expected (", out[0], ",))"));
    return out;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

Preamble parse_preamble(const std::string& first, const std::string& path) {
  EMBER_CHECK(first.size() >= 10 && first.compare(0, 6, kMagic, 6) == 0, "load_npy: '", path, "' is not a .npy file");
  const int major = static_cast<unsigned char>(first[6]), minor = static_cast<unsigned char>(first[7]);
  EMBER_CHECK(major >= 1 && major <= 3 && minor == 0, "load_npy: '", path, "' uses .npy format version ", major, ".",
              minor, ", expected 1.0, 2.0 or 3.0");
  Preamble p;
  p.version = major;
  auto byte = [&](size_t i) { return size_t(static_cast<unsigned char>(first[i])); };
  if (major == 1) {
    p.header_offset = 10;
    p.header_bytes = byte(8) | byte(9) << 8;
  } else {
    if (first.size() < 12) return p;  // header_offset 0: the caller reads two more bytes
    p.header_offset = 12;
    p.header_bytes = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
  }
  EMBER_CHECK(p.header_bytes <= kMaxHeaderBytes, "load_npy: '", path, "' declares a header of ", p.header_bytes,
              " bytes (at most ", kMaxHeaderBytes, ")");
  return p;
}

Header parse_header(const std::string& dict, const std::string& path) { return DictParser(dict, path).parse(); }

std::string file_header(DType dtype, const Shape& shape) {
  EMBER_CHECK(*descr_of(dtype) != 0, "save_npy: NumPy has no ", dtype, " dtype (convert with .to(DType::Float32), or ",
              "save it with save_safetensors)");
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  std::string dict = str("{'descr': '", descr_of(dtype), "', 'fortran_order': False, 'shape': (", dims, "), }");
  // Version 1.0 holds the header's length in 2 bytes; a longer header needs version 2.0's 4 bytes.
  const size_t pad_to = 64;
  size_t preamble = 10;
  size_t total = preamble + dict.size() + 1;
  if (total + (pad_to - total % pad_to) % pad_to - preamble > 0xFFFF) preamble = 12;
  total = preamble + dict.size() + 1;
  dict.append((pad_to - total % pad_to) % pad_to, ' ');
  dict += '\n';
  std::string out(kMagic, 6);
  out += char(preamble == 10 ? 1 : 2);
  out += char(0);
  const size_t n = dict.size();
  for (size_t i = 0; i < preamble - 8; ++i) out += char((n >> (8 * i)) & 0xFF);
  return out + dict;
}

}  // namespace ember::npy
