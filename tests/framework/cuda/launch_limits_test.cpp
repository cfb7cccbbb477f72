// Every CUDA kernel family's launch, as its host code computes it, checked against the limits of an
// H100/H200 for the largest shapes the benchmarks use, on a machine without a GPU. The shapes come
// from the same host functions and constants the .cu files launch with (the study matmuls'
// launch(), the attention kernels' grid(), framework/cuda/row_launch.h), so a change there that
// breaks a limit fails here. Grid-stride kernels (blocks_for in the CUDA-only indexing.cuh) are not
// covered: their grid is capped at 65535 * 8 blocks of 256 threads by construction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "examples/matmul_cuda/study/naive_kernel.h"
#include "examples/matmul_cuda/study/register_tiled_kernel.h"
#include "examples/matmul_cuda/study/tiled_kernel.h"
#include "framework/cuda/launch_limits.h"
#include "framework/cuda/row_launch.h"
#include "ops/attention/cuda/flash_kernel.h"

namespace ember {
namespace {

using cuda::kHopper;
using cuda::LaunchConfig;

// The largest problems the GPU benchmarks and tests launch: bench_matmul_gpu accepts n up to 32768
// and sweeps to 8192 by default; the matmul study slices batches at the grid's 65535 z-blocks;
// bench_attention sweeps N to 16384 at d 64 and 128, and attention's check_grid allows B*H up to 65535.
constexpr int64_t kMatmulN[] = {8192, 32768};
constexpr int kMaxBatchSlice = 65535;
constexpr int64_t kAttentionN = 16384;
constexpr int64_t kMaxBatchHeads = 65535;

void expect_fits(const LaunchConfig& c) {
  std::vector<std::string> problems = cuda::launch_problems(c, kHopper);
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  EXPECT_TRUE(problems.empty()) << all;
}

LaunchConfig from_shape(const std::string& name, const cuda::LaunchShape& l, int64_t static_smem) {
  LaunchConfig c;
  c.kernel = name;
  c.grid[0] = l.grid.x, c.grid[1] = l.grid.y, c.grid[2] = l.grid.z;
  c.block[0] = l.block.x, c.block[1] = l.block.y, c.block[2] = l.block.z;
  c.static_smem = static_smem;
  return c;
}

template <class T, int TILE>
void check_tiled(int64_t n) {
  using K = cuda::TiledMatmul<T, TILE>;
  expect_fits(from_shape("tiled<" + std::to_string(TILE) + ">", K::launch(n, n, kMaxBatchSlice), sizeof(typename K::Shared)));
}

TEST(LaunchLimits, MatmulStudyKernelsFitAtTheLargestSizes) {
  for (int64_t n : kMatmulN) {
    expect_fits(from_shape("naive", cuda::NaiveMatmul<float>::launch(n, n, kMaxBatchSlice), 0));
    check_tiled<float, 4>(n), check_tiled<float, 8>(n), check_tiled<float, 16>(n), check_tiled<float, 32>(n);
    check_tiled<double, 4>(n), check_tiled<double, 8>(n), check_tiled<double, 16>(n), check_tiled<double, 32>(n);
    using R = cuda::RegisterTiledSgemm;
    expect_fits(from_shape("register_tiled", R::launch(n, n, kMaxBatchSlice), sizeof(R::Shared)));
    // The double-buffered kernel declares two shared tiles.
    expect_fits(from_shape("register_tiled_db", R::launch(n, n, kMaxBatchSlice), 2 * sizeof(R::Shared)));
  }
}

template <class K>
LaunchConfig attention_launch(const std::string& name, cuda_attn::kern::Grid g, int64_t dynamic_smem) {
  LaunchConfig c;
  c.kernel = name;
  c.grid[0] = g.x, c.grid[1] = g.y;
  c.block[0] = K::THREADS;
  c.dynamic_smem = dynamic_smem;
  return c;
}

template <class T, int DMAX>
void check_flash() {
  using namespace cuda_attn::kern;
  const std::string tag = std::string(sizeof(T) == 4 ? "float" : "double") + ", d<=" + std::to_string(DMAX);
  using F = FlashForward<T, DMAX>;
  using KV = FlashBackwardKV<T, DMAX>;
  using Q = FlashBackwardQ<T, DMAX>;
  // Dynamic shared memory: attention.cu raises each kernel's limit to sizeof(Shared) (set_smem).
  expect_fits(attention_launch<F>("flash_forward " + tag, F::grid(kAttentionN, kMaxBatchHeads), sizeof(typename F::Shared)));
  expect_fits(attention_launch<KV>("flash_backward_kv " + tag, KV::grid(kAttentionN, kMaxBatchHeads), sizeof(typename KV::Shared)));
  expect_fits(attention_launch<Q>("flash_backward_q " + tag, Q::grid(kAttentionN, kMaxBatchHeads), sizeof(typename Q::Shared)));
}

TEST(LaunchLimits, AttentionKernelsFitAtTheLargestSizes) {
  check_flash<float, 64>(), check_flash<float, 128>(), check_flash<double, 64>(), check_flash<double, 128>();
  using namespace cuda_attn::kern;
  // The standard algorithm's kernels, at the largest N with one head (its N x N buffers bound B*H).
  LaunchConfig sm = attention_launch<RowSoftmax<double>>("row_softmax", RowSoftmax<double>::grid(kAttentionN, kMaxBatchHeads), 0);
  sm.static_smem = sizeof(RowSoftmax<double>::Shared);
  expect_fits(sm);
  expect_fits(attention_launch<RowDot<double>>("rowdot", RowDot<double>::grid(kMaxBatchHeads * kAttentionN), 0));
  expect_fits(attention_launch<SoftmaxBackward<double>>("softmax_backward",
                                                        SoftmaxBackward<double>::grid(kAttentionN * kAttentionN), 0));
}

TEST(LaunchLimits, RowKernelsFitAtTheirLargestRowCount) {
  // reduce (sum, max), softmax, layer norm, batch norm, cross-entropy: one block of kRowThreads per
  // row, up to kMaxRowBlocks rows (the host falls back to grid-stride kernels or raises beyond).
  LaunchConfig c;
  c.kernel = "row kernels";
  c.grid[0] = cuda::kMaxRowBlocks;
  c.block[0] = cuda::kRowThreads;
  c.static_smem = cuda::kRowSharedBytes;
  expect_fits(c);
  // The block reductions halve the active threads each step: a power of two.
  EXPECT_EQ(cuda::kRowThreads & (cuda::kRowThreads - 1), 0);
}

TEST(LaunchLimits, TheCheckCatchesEachLimit) {
  auto problems = [](auto edit) {
    LaunchConfig c;
    c.kernel = "probe";
    c.block[0] = 256;
    edit(c);
    return cuda::launch_problems(c, kHopper);
  };
  EXPECT_TRUE(problems([](LaunchConfig&) {}).empty());
  auto one = [&](auto edit, const std::string& text) {
    std::string all;
    for (const std::string& p : problems(edit)) all += p + "\n";
    EXPECT_NE(all.find(text), std::string::npos) << "expected '" << text << "' among:\n" << all;
  };
  one([](LaunchConfig& c) { c.block[0] = 2048; }, "block.x = 2048");
  one([](LaunchConfig& c) { c.block[0] = 64, c.block[1] = 32; }, "2048 threads per block");
  one([](LaunchConfig& c) { c.block[0] = 1, c.block[2] = 65; }, "block.z = 65");
  one([](LaunchConfig& c) { c.grid[1] = 65536; }, "grid.y = 65536");
  one([](LaunchConfig& c) { c.grid[0] = int64_t(1) << 31; }, "grid.x = 2147483648");
  one([](LaunchConfig& c) { c.grid[2] = 0; }, "grid.z = 0");
  one([](LaunchConfig& c) { c.static_smem = 48 * 1024 + 1; }, "static shared memory");
  one([](LaunchConfig& c) { c.dynamic_smem = 227 * 1024 + 1; }, "bytes of shared memory per block");
  one([](LaunchConfig& c) { c.static_smem = 40 * 1024, c.dynamic_smem = 200 * 1024; }, "bytes of shared memory per block");
}

}  // namespace
}  // namespace ember
