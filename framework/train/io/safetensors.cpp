#include "framework/train/io/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "framework/core/max_rank.h"

namespace ember::io {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Headers above this size are refused (Hugging Face's reader uses the same bound).
constexpr uint64_t kMaxHeader = 100u << 20;

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "safetensors: unusual float sizes");

bool little_endian() {
  uint16_t one = 1;
  uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

const char* file_dtype(DType t) {
  switch (t) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Int64: return "I64";
    case DType::Bool: return "BOOL";
    case DType::BFloat16: return "BF16";
    case DType::Float16: return "F16";
  }
  return "?";
}

struct Entry {
  std::string name;
  std::string dtype;  // as in the file
  Shape shape;
  uint64_t begin = 0, end = 0;
};

size_t file_itemsize(const std::string& d) {
  if (d == "F32") return 4;
  if (d == "F64" || d == "I64") return 8;
  if (d == "F16" || d == "BF16") return 2;
  if (d == "BOOL") return 1;
  return 0;
}

uint64_t checked_u64(const json& v, const std::string& what, const std::string& field) {
  EMBER_CHECK(v.is_number_unsigned(), what, ": '", field, "' must hold non-negative integers");
  return v.get<uint64_t>();
}

// Parses and validates the header against a data section of `data_len` bytes.
std::vector<Entry> parse_header(const char* text, size_t len, uint64_t data_len, Metadata& metadata, const std::string& what) {
  json h;
  try {
    h = json::parse(text, text + len);
  } catch (const json::exception& e) {
    throw Error(str(what, ": the header is not valid JSON (", e.what(), ")"));
  }
  EMBER_CHECK(h.is_object(), what, ": the header must be a JSON object");
  std::vector<Entry> entries;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      EMBER_CHECK(v.is_object(), what, ": '__metadata__' must map strings to strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        EMBER_CHECK(m.value().is_string(), what, ": metadata '", m.key(), "' must be a string");
        metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = str(what, ": tensor '", name, "'");
    EMBER_CHECK(!name.empty(), what, ": a tensor has an empty name");
    EMBER_CHECK(v.is_object(), where, " must be an object with dtype, shape and data_offsets");
    for (auto f = v.begin(); f != v.end(); ++f)
      EMBER_CHECK(f.key() == "dtype" || f.key() == "shape" || f.key() == "data_offsets", where, " has an unknown field '",
                  f.key(), "'");
    EMBER_CHECK(v.contains("dtype") && v["dtype"].is_string(), where, ": 'dtype' is missing or not a string");
    EMBER_CHECK(v.contains("shape") && v["shape"].is_array(), where, ": 'shape' is missing or not an array");
    EMBER_CHECK(v.contains("data_offsets") && v["data_offsets"].is_array() && v["data_offsets"].size() == 2, where,
                ": 'data_offsets' must be an array [begin, end]");
    Entry e;
    e.name = name;
    e.dtype = v["dtype"].get<std::string>();
    size_t es = file_itemsize(e.dtype);
    EMBER_CHECK(es != 0, where, ": unsupported dtype '", e.dtype, "' (Ember reads F32, F64, I64, BOOL, F16 and BF16)");
    check_rank(v["shape"].size(), where.c_str());  // before the shape is printed or allocated
    uint64_t count = 1;
    bool overflow = false;
    for (const json& d : v["shape"]) {
      uint64_t n = checked_u64(d, where, "shape");
      EMBER_CHECK(n <= uint64_t(std::numeric_limits<int64_t>::max()), where, ": dimension ", n, " is too large");
      e.shape.push_back(int64_t(n));
      if (n != 0 && count > std::numeric_limits<uint64_t>::max() / n) overflow = true;
      else count *= n;
    }
    e.begin = checked_u64(v["data_offsets"][0], where, "data_offsets");
    e.end = checked_u64(v["data_offsets"][1], where, "data_offsets");
    EMBER_CHECK(e.begin <= e.end && e.end <= data_len, where, ": data_offsets [", e.begin, ", ", e.end,
                "] lie outside the data section of ", data_len, " bytes (truncated or corrupt file)");
    EMBER_CHECK(!overflow && count <= (e.end - e.begin) / es && count * es == e.end - e.begin, where, ": shape ",
                to_string(e.shape), " of ", e.dtype, " needs ", overflow ? std::string("too many") : std::to_string(count * es),
                " bytes but data_offsets span ", e.end - e.begin);
    try {
      contiguous_strides(e.shape);  // a zero size must not hide sizes whose strides overflow
    } catch (const Error& err) {
      throw Error(str(where, ": shape ", to_string(e.shape), " is too large (", err.what(), ")"));
    }
    entries.push_back(std::move(e));
  }
  // The tensors must tile the data section: sorted by offset, each starts where the previous ended.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  for (const Entry& e : entries) {
    EMBER_CHECK(e.begin >= pos, what, ": tensor '", e.name, "' (bytes ", e.begin, "..", e.end,
                ") overlaps the previous tensor, which ends at ", pos);
    EMBER_CHECK(e.begin == pos, what, ": bytes ", pos, "..", e.begin, " of the data section belong to no tensor");
    pos = e.end;
  }
  EMBER_CHECK(pos == data_len, what, ": the data section has ", data_len, " bytes but the tensors cover ", pos);
  return entries;
}

// A file's BOOL byte may be any nonzero value for true; a C++ bool must hold exactly 0 or 1.
void normalize_bool(const Tensor& t) {
  if (t.dtype() != DType::Bool) return;
  uint8_t* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
}

// Converts one entry's bytes into a tensor (with bytes == null: an uninitialised tensor of its type).
Tensor make_tensor(const Entry& e, const uint8_t* bytes) {
  size_t n = size_t(e.end - e.begin);
  DType dt = e.dtype == "F32"    ? DType::Float32
             : e.dtype == "F64"  ? DType::Float64
             : e.dtype == "BOOL" ? DType::Bool
             : e.dtype == "F16"  ? DType::Float16
             : e.dtype == "BF16" ? DType::BFloat16
                                 : DType::Int64;
  Tensor t = empty(e.shape, dt);
  if (n && bytes) std::memcpy(t.raw_data(), bytes, n);
  if (bytes) normalize_bool(t);
  return t;
}

uint64_t header_length(const uint8_t* p) {
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | p[i];
  return hlen;
}

// Validates a file of `file_size` bytes whose first bytes are in `prefix` (at least the 8-byte
// length and the header, when the file is long enough to hold them).
std::vector<Entry> read_header(const uint8_t* prefix, uint64_t file_size, const std::string& what, uint64_t& data_start,
                               Metadata& md) {
  EMBER_CHECK(little_endian(), "safetensors: this reader assumes a little-endian machine");
  EMBER_CHECK(file_size >= 8, what, ": ", file_size, " bytes is too short for the 8-byte header length (truncated file?)");
  uint64_t hlen = header_length(prefix);
  EMBER_CHECK(hlen <= kMaxHeader, what, ": header length ", hlen, " exceeds the ", kMaxHeader, "-byte limit (corrupt file?)");
  EMBER_CHECK(hlen <= file_size - 8, what, ": header length ", hlen, " runs past the end of the ", file_size,
              "-byte file (truncated or corrupt)");
  EMBER_CHECK(hlen >= 2 && prefix[8] == '{', what, ": the header must start with '{'");
  data_start = 8 + hlen;
  return parse_header(reinterpret_cast<const char*>(prefix + 8), size_t(hlen), file_size - data_start, md, what);
}

}  // namespace

std::vector<uint8_t> serialize_safetensors(const NamedTensors& tensors, const Metadata& metadata) {
  EMBER_CHECK(little_endian(), "safetensors: this writer assumes a little-endian machine");
  ordered_json h = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json md = ordered_json::object();
    for (const auto& [k, v] : metadata) md[k] = v;
    h["__metadata__"] = md;
  }
  std::vector<Tensor> data;
  uint64_t pos = 0;
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(!name.empty() && name != "__metadata__", "save_safetensors: invalid tensor name '", name, "'");
    EMBER_CHECK(!h.contains(name), "save_safetensors: the name '", name, "' appears twice");
    EMBER_CHECK(t.defined(), "save_safetensors: tensor '", name, "' is undefined");
    Tensor c = t.detach().to(Device::CPU).contiguous();
    uint64_t nbytes = uint64_t(c.numel()) * itemsize(c.dtype());
    h[name] = {{"dtype", file_dtype(c.dtype())}, {"shape", c.shape()}, {"data_offsets", {pos, pos + nbytes}}};
    pos += nbytes;
    data.push_back(c);
  }
  std::string header = h.dump();
  header.append((8 - (8 + header.size()) % 8) % 8, ' ');  // pad so that the data section starts 8-aligned
  std::vector<uint8_t> out(8 + header.size() + pos);
  uint64_t hlen = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(hlen >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  size_t at = 8 + header.size();
  for (const Tensor& c : data) {
    size_t n = size_t(c.numel()) * itemsize(c.dtype());
    if (n) std::memcpy(out.data() + at, c.raw_data(), n);
    at += n;
  }
  return out;
}

Safetensors parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& what) {
  uint64_t start = 0;
  Safetensors out;
  std::vector<Entry> entries = read_header(bytes.data(), bytes.size(), what, start, out.metadata);
  for (const Entry& e : entries) out.tensors.emplace_back(e.name, make_tensor(e, bytes.data() + start + e.begin));
  return out;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  write_file_atomic(path, serialize_safetensors(tensors, metadata));
}

namespace {
using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Opens `path` and validates its header; `start` receives where the data section begins.
File open_validated(const std::string& path, std::vector<Entry>& entries, uint64_t& start, Metadata& md) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  EMBER_CHECK(f, "cannot open '", path, "': ", std::strerror(errno));
  EMBER_CHECK(std::fseek(f.get(), 0, SEEK_END) == 0, "cannot seek in '", path, "'");
  long size = std::ftell(f.get());
  EMBER_CHECK(size >= 0, "cannot size '", path, "'");
  std::rewind(f.get());
  std::string what = "'" + path + "'";
  std::vector<uint8_t> prefix(size_t(std::min<long>(size, 8)));
  EMBER_CHECK(std::fread(prefix.data(), 1, prefix.size(), f.get()) == prefix.size(), "reading ", what, " failed");
  // The header, as far as the file and the size limit allow; read_header says which was exceeded.
  uint64_t hlen = prefix.size() == 8 ? header_length(prefix.data()) : 0;
  uint64_t take = std::min<uint64_t>({hlen, kMaxHeader + 1, uint64_t(size) - prefix.size()});
  prefix.resize(prefix.size() + size_t(take));
  EMBER_CHECK(take == 0 || std::fread(prefix.data() + 8, 1, size_t(take), f.get()) == size_t(take), "reading ", what,
              " failed");
  entries = read_header(prefix.data(), uint64_t(size), what, start, md);
  return f;
}
}  // namespace

std::vector<TensorInfo> read_safetensors_header(const std::string& path, Metadata* metadata) {
  std::vector<Entry> entries;
  uint64_t start = 0;
  Metadata md;
  open_validated(path, entries, start, md);
  if (metadata) *metadata = md;
  std::vector<TensorInfo> out;
  for (const Entry& e : entries) out.push_back({e.name, e.dtype, e.shape});
  return out;
}

Safetensors load_safetensors(const std::string& path) {
  // Reads the header first and each tensor straight into its own storage, so that loading a large
  // model does not hold the file twice in memory.
  std::vector<Entry> entries;
  uint64_t start = 0;
  Safetensors out;
  File f = open_validated(path, entries, start, out.metadata);
  const std::string what = "'" + path + "'";
  for (const Entry& e : entries) {
    size_t n = size_t(e.end - e.begin);
    Tensor t = make_tensor(e, nullptr);
    EMBER_CHECK(std::fseek(f.get(), long(start + e.begin), SEEK_SET) == 0, "cannot seek in ", what);
    EMBER_CHECK(n == 0 || std::fread(t.raw_data(), 1, n, f.get()) == n, "reading tensor '", e.name, "' from ", what,
                " failed (file changed while reading?)");
    normalize_bool(t);
    out.tensors.emplace_back(e.name, t);
  }
  return out;
}

void save_module(const std::string& path, const nn::Module& module, const Metadata& metadata) {
  save_safetensors(path, module.state_dict(), metadata);
}

Metadata load_module(const std::string& path, nn::Module& module, bool strict) {
  Safetensors st = load_safetensors(path);
  try {
    module.load_state_dict(st.tensors, strict);
  } catch (const Error& e) {
    throw Error(str("loading '", path, "' into the model: ", e.what()));
  }
  return st.metadata;
}

}  // namespace ember::io
