// NumPy .npy files (format versions 1.0 to 3.0, npy_header.h): a magic string, a Python-dict header with dtype, order
// and shape, then the raw little-endian data. Lets numpy.load read what Ember computed.
#pragma once
#include <string>

#include "framework/core/tensor.h"

namespace ember {

// Writes t (any layout; stored C-contiguous) to path through write_file_atomic (atomic_write.h).
void save_npy(const std::string& path, const Tensor& t);
// Reads a C-ordered little-endian float32, float64 or int64 .npy file; checks sizes before reading.
Tensor load_npy(const std::string& path);
// The same from bytes held in memory (the fuzz harness and tests); `path` names them in errors.
Tensor parse_npy(const std::string& bytes, const std::string& path = "npy buffer");

}  // namespace ember
