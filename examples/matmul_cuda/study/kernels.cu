// The GPU side of the matmul study kernels: each __global__ function only lays out shared memory,
// calls the per-thread phases from *_kernel.h, and places the barriers between them. The phases
// themselves are tested on the CPU by tests/ops/matmul/cuda_emulator_test.cpp.
#include <algorithm>

#include "examples/matmul_cuda/study/naive_kernel.h"
#include "examples/matmul_cuda/study/register_tiled_kernel.h"
#include "examples/matmul_cuda/study/study_kernels.h"
#include "examples/matmul_cuda/study/tiled_kernel.h"
#include "framework/cuda/check.h"

namespace ember::matmul_cuda_study {
using cuda::GemmView;
using cuda::Idx3;
using cuda::LaunchShape;
using cuda::NaiveMatmul;
using cuda::RegisterTiledSgemm;
using cuda::TiledMatmul;
namespace {

__device__ Idx3 block_idx() { return {int(blockIdx.x), int(blockIdx.y), int(blockIdx.z)}; }
__device__ Idx3 thread_idx() { return {int(threadIdx.x), int(threadIdx.y), int(threadIdx.z)}; }

template <class T>
__global__ void naive_kernel(GemmView<T> g) {
  NaiveMatmul<T>::run(g, block_idx(), thread_idx());
}

template <class T, int TILE>
__global__ void tiled_kernel(GemmView<T> g, int64_t steps) {
  using K = TiledMatmul<T, TILE>;
  __shared__ typename K::Shared s;
  typename K::Regs r;
  Idx3 b = block_idx(), t = thread_idx();
  for (int64_t step = 0; step < steps; ++step) {
    K::load(g, s, b, t, step);
    __syncthreads();
    K::accumulate(s, r, t);
    __syncthreads();
  }
  K::store(g, r, b, t);
}

template <class K>
__global__ void __launch_bounds__(K::kThreads) register_tiled_kernel(GemmView<float> g, typename K::Vec vec,
                                                                     int64_t steps) {
  __shared__ typename K::Shared s;
  typename K::Regs r;
  Idx3 b = block_idx(), t = thread_idx();
  for (int64_t step = 0; step < steps; ++step) {
    K::load(g, vec, s, b, t, step);
    __syncthreads();
    K::accumulate(s, r, t);
    __syncthreads();
  }
  K::store(g, r, b, t);
}

// The same phases with two shared tiles and one barrier per step (see register_tiled_kernel.h).
template <class K>
__global__ void __launch_bounds__(K::kThreads) register_tiled_db_kernel(GemmView<float> g, typename K::Vec vec,
                                                                        int64_t steps) {
  __shared__ typename K::Shared s[2];
  typename K::Regs r;
  Idx3 b = block_idx(), t = thread_idx();
  K::fetch(g, vec, r.next, b, t, 0);
  K::stash(r.next, s[0], t);
  __syncthreads();
  for (int64_t step = 0; step < steps; ++step) {
    bool more = step + 1 < steps;
    if (more) K::fetch(g, vec, r.next, b, t, step + 1);  // in flight during the math below
    K::accumulate(s[step % 2], r, t);
    if (more) K::stash(r.next, s[(step + 1) % 2], t);
    __syncthreads();
  }
  K::store(g, r, b, t);
}

dim3 as_dim3(Idx3 i) { return dim3(unsigned(i.x), unsigned(i.y), unsigned(i.z)); }

void check_grid(const LaunchShape& l, const char* name) {
  EMBER_CHECK(l.grid.y <= 65535 && l.grid.z <= 65535, "matmul (", name, "): output too large for one launch, grid ",
              l.grid.x, " x ", l.grid.y, " x ", l.grid.z);
}

// A grid's z dimension holds 65535 blocks: a larger batch runs in slices.
template <class T, class Launch>
void in_slices(const GemmView<T>& g, int64_t batch, Launch launch) {
  constexpr int64_t kMaxZ = 65535;
  for (int64_t z0 = 0; z0 < batch; z0 += kMaxZ) {
    GemmView<T> s = g;
    s.a += z0 * g.a_bs;
    s.b += z0 * g.b_bs;
    s.c += z0 * g.c_bs;
    launch(s, int(std::min(kMaxZ, batch - z0)));
  }
}

template <class T, int TILE>
void tiled(const GemmView<T>& g, int64_t batch) {
  using K = TiledMatmul<T, TILE>;
  in_slices(g, batch, [](const GemmView<T>& s, int nb) {
    LaunchShape l = K::launch(s.m, s.n, nb);
    check_grid(l, "tiled");
    tiled_kernel<T, TILE><<<as_dim3(l.grid), as_dim3(l.block)>>>(s, K::steps(s));
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

template <class T>
void launch_naive(const GemmView<T>& g, int64_t batch) {
  in_slices(g, batch, [](const GemmView<T>& s, int nb) {
    LaunchShape l = NaiveMatmul<T>::launch(s.m, s.n, nb);
    check_grid(l, "naive");
    naive_kernel<T><<<as_dim3(l.grid), as_dim3(l.block)>>>(s);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void launch_tiled(const GemmView<T>& g, int64_t batch, int tile) {
  switch (tile) {
    case 4: return tiled<T, 4>(g, batch);
    case 8: return tiled<T, 8>(g, batch);
    case 16: return tiled<T, 16>(g, batch);
    case 32: return tiled<T, 32>(g, batch);
  }
  throw Error(str("matmul (tiled): tile must be 4, 8, 16 or 32, got ", tile));
}

void launch_register_tiled(const GemmView<float>& g, int64_t batch, bool double_buffered) {
  using K = RegisterTiledSgemm;
  in_slices(g, batch, [double_buffered](const GemmView<float>& s, int nb) {
    LaunchShape l = K::launch(s.m, s.n, nb);
    check_grid(l, "register_tiled");
    if (double_buffered)
      register_tiled_db_kernel<K><<<as_dim3(l.grid), as_dim3(l.block)>>>(s, K::vectorisable(s), K::steps(s));
    else
      register_tiled_kernel<K><<<as_dim3(l.grid), as_dim3(l.block)>>>(s, K::vectorisable(s), K::steps(s));
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

template void launch_naive<float>(const GemmView<float>&, int64_t);
template void launch_naive<double>(const GemmView<double>&, int64_t);
template void launch_tiled<float>(const GemmView<float>&, int64_t, int);
template void launch_tiled<double>(const GemmView<double>&, int64_t, int);

}  // namespace ember::matmul_cuda_study
