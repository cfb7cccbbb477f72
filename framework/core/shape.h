// Shapes and strides: small helpers shared by tensors, views and kernels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

using Shape = std::vector<int64_t>;

// Element counts and byte sizes multiply through these, so that a shape whose product does not
// fit in int64 (from a hostile file header or a typo) raises ember::Error instead of wrapping to a
// small number and handing out a buffer too short for the data written into it.
int64_t checked_mul(int64_t a, int64_t b, const char* what);  // a, b >= 0
int64_t checked_bytes(int64_t numel, size_t itemsize, const char* what);  // numel * itemsize, refused past int64
int64_t numel(const Shape& s);  // the product of the sizes; ember::Error when it overflows int64
std::string to_string(const Shape& s);  // "[2, 3]"
Shape contiguous_strides(const Shape& s);
// NumPy broadcasting of two shapes; throws ember::Error naming `op` when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Maps a possibly negative dim into [0, ndim); throws naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace ember
