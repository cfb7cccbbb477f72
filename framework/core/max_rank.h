// The most dimensions a tensor may have: NumPy's limit, so that every Ember tensor converts to a
// NumPy array and printing, indexing and stride loops stay bounded on a hostile file's shape.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ember {

constexpr int64_t kMaxRank = 64;

// Throws ember::Error naming `what`, the rank and the limit when rank exceeds kMaxRank.
void check_rank(size_t rank, const char* what);

}  // namespace ember
