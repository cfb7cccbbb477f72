// Shapes and strides: small helpers shared by tensors, views and kernels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[2, 3]"
Shape contiguous_strides(const Shape& s);
// NumPy broadcasting of two shapes; throws ember::Error naming `op` when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Maps a possibly negative dim into [0, ndim); throws naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace ember
