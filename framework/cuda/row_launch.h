// The launch shape of the CUDA kernels that give one block to each row (or channel) and combine
// the block's threads through shared memory: reduce (sum, max), softmax, layer norm, batch norm's
// statistics, cross-entropy. Plain C++, so tests/framework/cuda/launch_limits_test.cpp checks the
// very numbers these kernels launch with.
#pragma once
#include <cstdint>

namespace ember::cuda {

constexpr int kRowThreads = 256;
// Rows one launch holds (grid.x's limit); a larger input takes the grid-stride column kernels.
constexpr int64_t kMaxRowBlocks = (int64_t(1) << 31) - 1;
// The most shared memory one thread of such a block keeps (a pair of doubles, or a value and its
// int64 index); each kernel static_asserts that its partials fit.
constexpr int64_t kRowPartBytes = 16;
constexpr int64_t kRowSharedBytes = kRowThreads * kRowPartBytes;

}  // namespace ember::cuda
