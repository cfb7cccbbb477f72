// The CUDA matmul study kernels, run on the CPU by a block emulator: it executes the very
// __host__ __device__ phases the GPU kernels call (ops/matmul/cuda/*_kernel.h), for every block,
// all threads of one phase before any thread of the next, which is exactly what __syncthreads()
// guarantees and no more. Shared memory starts as NaN, so reading a value nobody staged shows up.
// Compiled by g++: these tests run on every machine, GPU or not.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "examples/matmul_cuda/study/naive_kernel.h"
#include "examples/matmul_cuda/study/register_tiled_kernel.h"
#include "examples/matmul_cuda/study/tiled_kernel.h"
#include "tests/ops/matmul/gemm_cases.h"

namespace ember::testing {
namespace {

using cuda::Idx3;
using cuda::LaunchShape;

std::vector<Idx3> threads_of(const LaunchShape& l) {
  std::vector<Idx3> out;
  for (int z = 0; z < l.block.z; ++z)
    for (int y = 0; y < l.block.y; ++y)
      for (int x = 0; x < l.block.x; ++x) out.push_back({x, y, z});
  return out;
}

template <class F>
void for_each_block(const LaunchShape& l, F&& f) {
  for (int z = 0; z < l.grid.z; ++z)
    for (int y = 0; y < l.grid.y; ++y)
      for (int x = 0; x < l.grid.x; ++x) f(Idx3{x, y, z});
}

template <class Shared>
std::unique_ptr<Shared> nan_shared() {
  auto s = std::make_unique<Shared>();
  std::memset(static_cast<void*>(s.get()), 0xff, sizeof(Shared));  // all-ones bits: NaN in float and double
  return s;
}

template <class T>
void emulate_naive(const cuda::GemmView<T>& g, int batch) {
  using K = cuda::NaiveMatmul<T>;
  LaunchShape l = K::launch(g.m, g.n, batch);
  auto threads = threads_of(l);
  for_each_block(l, [&](Idx3 b) {
    for (Idx3 t : threads) K::run(g, b, t);
  });
}

// Which barriers the emulated kernel has: both (the real kernels), none, or only the first
// (tiles complete before use, but nothing stops a fast thread from staging the next step's tile
// over one a slow thread is still reading).
enum class Barriers { Both, None, FirstOnly };

// Runs a phased kernel K: per block, for each k step every thread's load, (barrier), every
// thread's accumulate, (barrier); then every thread's store. Without barriers, threads run their
// phases back to back in the worst order for the missing barrier.
template <class K, class T, class Load>
void emulate_phased(const cuda::GemmView<T>& g, int batch, int64_t steps, Load load, Barriers barriers = Barriers::Both) {
  LaunchShape l = K::launch(g.m, g.n, batch);
  auto threads = threads_of(l);
  for_each_block(l, [&](Idx3 b) {
    auto shared = nan_shared<typename K::Shared>();
    std::vector<typename K::Regs> regs(threads.size());
    for (int64_t step = 0; step < steps; ++step) {
      if (barriers == Barriers::Both) {
        for (Idx3 t : threads) load(*shared, b, t, step);
        for (size_t i = 0; i < threads.size(); ++i) K::accumulate(*shared, regs[i], threads[i]);
      } else if (barriers == Barriers::None) {
        for (size_t i = 0; i < threads.size(); ++i) {
          load(*shared, b, threads[i], step);
          K::accumulate(*shared, regs[i], threads[i]);
        }
      } else {  // FirstOnly: thread 0 races ahead into the next step's load before the others read
        if (step == 0)
          for (Idx3 t : threads) load(*shared, b, t, step);
        if (step + 1 < steps) {
          K::accumulate(*shared, regs[0], threads[0]);
          load(*shared, b, threads[0], step + 1);
          for (size_t i = 1; i < threads.size(); ++i) K::accumulate(*shared, regs[i], threads[i]);
          for (size_t i = 1; i < threads.size(); ++i) load(*shared, b, threads[i], step + 1);
        } else {
          for (size_t i = 0; i < threads.size(); ++i) K::accumulate(*shared, regs[i], threads[i]);
        }
      }
    }
    for (size_t i = 0; i < threads.size(); ++i) K::store(g, regs[i], b, threads[i]);
  });
}

template <class T, int TILE>
void emulate_tiled(const cuda::GemmView<T>& g, int batch, Barriers barriers = Barriers::Both) {
  using K = cuda::TiledMatmul<T, TILE>;
  emulate_phased<K>(
      g, batch, K::steps(g), [&](typename K::Shared& s, Idx3 b, Idx3 t, int64_t step) { K::load(g, s, b, t, step); },
      barriers);
}

template <class K>
void emulate_register_tiled(const cuda::GemmView<float>& g, int batch) {
  typename K::Vec vec = K::vectorisable(g);
  emulate_phased<K>(g, batch, K::steps(g),
                    [&](typename K::Shared& s, Idx3 b, Idx3 t, int64_t step) { K::load(g, vec, s, b, t, step); });
}

TEST(CudaEmulator, NaiveMatchesFloat64Reference) {
  for (const GemmCase& c : awkward_gemm_cases()) {
    HostGemm<float> f(c);
    emulate_naive(f.view, c.batch);
    EXPECT_TRUE(f.check(f.c));
    HostGemm<double> d(c);
    emulate_naive(d.view, c.batch);
    EXPECT_TRUE(d.check(d.c));
  }
}

template <int TILE>
void check_tiled() {
  for (const GemmCase& c : awkward_gemm_cases()) {
    HostGemm<float> f(c);
    emulate_tiled<float, TILE>(f.view, c.batch);
    EXPECT_TRUE(f.check(f.c)) << "TILE " << TILE;
    HostGemm<double> d(c);
    emulate_tiled<double, TILE>(d.view, c.batch);
    EXPECT_TRUE(d.check(d.c)) << "TILE " << TILE;
  }
}
TEST(CudaEmulator, Tiled4MatchesFloat64Reference) { check_tiled<4>(); }
TEST(CudaEmulator, Tiled8MatchesFloat64Reference) { check_tiled<8>(); }
TEST(CudaEmulator, Tiled16MatchesFloat64Reference) { check_tiled<16>(); }
TEST(CudaEmulator, Tiled32MatchesFloat64Reference) { check_tiled<32>(); }

// The emulator is only worth something if it catches a missing __syncthreads(): run the tiled
// kernel's phases thread by thread with no barrier and expect a wrong product.
TEST(CudaEmulator, TiledWithoutBarriersIsCaught) {
  GemmCase c{33, 40, 36};
  HostGemm<float> f(c);
  emulate_tiled<float, 8>(f.view, c.batch, Barriers::None);
  EXPECT_FALSE(f.check(f.c));
  // The second barrier matters too: without it a thread overwrites tiles still being read.
  HostGemm<float> h(c);
  emulate_tiled<float, 8>(h.view, c.batch, Barriers::FirstOnly);
  EXPECT_FALSE(h.check(h.c));
  HostGemm<float> ok(c);
  emulate_tiled<float, 8>(ok.view, c.batch, Barriers::Both);
  EXPECT_TRUE(ok.check(ok.c));
}

template <class K>
void check_register_tiled(const char* config) {
  for (const GemmCase& c : awkward_gemm_cases()) {
    HostGemm<float> f(c);
    emulate_register_tiled<K>(f.view, c.batch);
    EXPECT_TRUE(f.check(f.c)) << config;
  }
}
// The double-buffered kernel: prologue, then per step each thread's fetch(t+1), accumulate(t)
// and stash(t+1) with no barrier between them (run thread by thread, the worst order), then the
// step's one barrier. Writing into the tile being read would show up here.
template <class K>
void emulate_register_tiled_db(const cuda::GemmView<float>& g, int batch) {
  typename K::Vec vec = K::vectorisable(g);
  LaunchShape l = K::launch(g.m, g.n, batch);
  auto threads = threads_of(l);
  int64_t steps = K::steps(g);
  for_each_block(l, [&](Idx3 b) {
    auto s0 = nan_shared<typename K::Shared>(), s1 = nan_shared<typename K::Shared>();
    typename K::Shared* buf[2] = {s0.get(), s1.get()};
    std::vector<typename K::Regs> regs(threads.size());
    for (size_t i = 0; i < threads.size(); ++i) {
      K::fetch(g, vec, regs[i].next, b, threads[i], 0);
      K::stash(regs[i].next, *buf[0], threads[i]);
    }
    for (int64_t step = 0; step < steps; ++step)
      for (size_t i = 0; i < threads.size(); ++i) {
        bool more = step + 1 < steps;
        if (more) K::fetch(g, vec, regs[i].next, b, threads[i], step + 1);
        K::accumulate(*buf[step % 2], regs[i], threads[i]);
        if (more) K::stash(regs[i].next, *buf[(step + 1) % 2], threads[i]);
      }
    for (size_t i = 0; i < threads.size(); ++i) K::store(g, regs[i], b, threads[i]);
  });
}

TEST(CudaEmulator, RegisterTiledDoubleBufferedMatchesFloat64Reference) {
  for (const GemmCase& c : awkward_gemm_cases()) {
    HostGemm<float> f(c);
    emulate_register_tiled_db<cuda::RegisterTiledSgemm>(f.view, c.batch);
    EXPECT_TRUE(f.check(f.c));
    HostGemm<float> s(c);
    emulate_register_tiled_db<cuda::RegisterTiledMatmul<32, 64, 8, 4, 8>>(s.view, c.batch);
    EXPECT_TRUE(s.check(s.c));
  }
}

TEST(CudaEmulator, RegisterTiledGpuConfigMatchesFloat64Reference) {
  check_register_tiled<cuda::RegisterTiledSgemm>("128x128x8, 8x8 per thread");
}
TEST(CudaEmulator, RegisterTiledSmallConfigsMatchFloat64Reference) {
  check_register_tiled<cuda::RegisterTiledMatmul<16, 16, 4, 4, 4>>("16x16x4, 4x4 per thread");
  check_register_tiled<cuda::RegisterTiledMatmul<32, 64, 8, 4, 8>>("32x64x8, 4x8 per thread (two float4s per tile)");
}

// The float4 path is taken exactly when the operands allow it, and is exercised by the cases above.
TEST(CudaEmulator, RegisterTiledVectorisesOnlyAlignedRowMajorOperands) {
  using K = cuda::RegisterTiledSgemm;
  HostGemm<float> row(GemmCase{17, 8, 12});
  K::Vec v = K::vectorisable(row.view);
  EXPECT_TRUE(v.a && v.b);
  HostGemm<float> odd(GemmCase{7, 5, 3});  // row strides 5 and 3: rows are not 16-byte aligned
  v = K::vectorisable(odd.view);
  EXPECT_FALSE(v.a || v.b);
  HostGemm<float> ta(GemmCase{33, 17, 65, 1, Layout::TransposedA});
  EXPECT_FALSE(K::vectorisable(ta.view).a);
  cuda::GemmView<float> shifted = row.view;
  shifted.a += 1;  // 4 bytes off: not 16-byte aligned
  EXPECT_FALSE(K::vectorisable(shifted).a);
}

TEST(CudaEmulator, LaunchShapesCoverTheOutput) {
  using T16 = cuda::TiledMatmul<float, 16>;
  LaunchShape l = T16::launch(33, 65, 3);
  EXPECT_EQ(l.grid.x, 5);
  EXPECT_EQ(l.grid.y, 3);
  EXPECT_EQ(l.grid.z, 3);
  EXPECT_EQ(l.block.x * l.block.y, 256);
  LaunchShape r = cuda::RegisterTiledSgemm::launch(129, 128, 1);
  EXPECT_EQ(r.grid.x, 1);
  EXPECT_EQ(r.grid.y, 2);
  EXPECT_EQ(r.block.x, cuda::RegisterTiledSgemm::kThreads);
}

}  // namespace
}  // namespace ember::testing
