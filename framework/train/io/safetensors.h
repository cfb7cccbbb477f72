// The safetensors format (Hugging Face): an 8-byte little-endian header length N, N bytes of JSON
// mapping each tensor's name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the
// data section that follows; an optional "__metadata__" maps strings to strings), then the raw
// little-endian data. Reading validates everything before it copies a byte: the header length
// against the file size, every field's type, dtypes, offsets in range, byte counts that match the
// shapes, and tensors that tile the data section exactly (no overlap, no gap), so a truncated or
// corrupted file raises ember::Error and never reads outside its buffer.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "framework/train/io/atomic_write.h"
#include "framework/train/nn/module.h"

namespace ember::io {

using Metadata = std::map<std::string, std::string>;

struct Safetensors {
  NamedTensors tensors;  // in file order; F32, F64, I64, BOOL, F16, BF16 -> float32, float64, int64, bool,
                        // float16, bfloat16 (the bytes as stored, no conversion)
  Metadata metadata;
};

// Serialises tensors (every dtype; any device and strides) to the format's bytes.
std::vector<uint8_t> serialize_safetensors(const NamedTensors& tensors, const Metadata& metadata = {});
// Parses bytes held in memory; `what` names the source in error messages.
Safetensors parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& what = "safetensors buffer");

// Writes to `path` through write_file_atomic (atomic_write.h): a crash or error never leaves a
// half-written file under that name.
void save_safetensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata = {});
Safetensors load_safetensors(const std::string& path);

// One tensor's entry in a file's header, as the file declares it (dtype "F32", "BF16", ...).
struct TensorInfo {
  std::string name;
  std::string dtype;
  Shape shape;
};
// The header alone, validated exactly as load_safetensors does, without reading or allocating the
// data: callers check what a file holds (a model's config against its weights) before building.
std::vector<TensorInfo> read_safetensors_header(const std::string& path, Metadata* metadata = nullptr);

// A module's parameters under their dotted names.
void save_module(const std::string& path, const nn::Module& module, const Metadata& metadata = {});
// Loads a file into a module: every name, shape and dtype must match (the error names the first
// that differs, and the model is left unchanged). Returns the file's metadata.
Metadata load_module(const std::string& path, nn::Module& module, bool strict = true);

}  // namespace ember::io
