// World size 1: every collective is the identity, with neither MPI nor NCCL needed, and the
// Communicator's argument checks hold before any transport is involved.
#include <gtest/gtest.h>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::all_close;

namespace {

dist::Communicator local() { return dist::Communicator(dist::make_local_backend()); }

TEST(DistLocal, RankAndWorldSize) {
  dist::Communicator c = local();
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.world_size(), 1);
  EXPECT_TRUE(c.is_root());
  EXPECT_EQ(c.backend_name(Device::CPU), "local");
  EXPECT_EQ(c.backend_name(Device::CUDA), "local");
}

TEST(DistLocal, CollectivesAreTheIdentity) {
  dist::Communicator c = local();
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor x = dt == DType::Int64 ? randint({7, 3}, -50, 50) : randn({7, 3}, dt);
    Tensor before = x.clone();
    c.all_reduce(x);
    EXPECT_TRUE(all_close(x, before, 0, 0));
    if (dt != DType::Int64) c.all_reduce(x, dist::ReduceOp::Mean);
    c.all_reduce_async(x)->wait();
    c.broadcast(x, 0);
    EXPECT_TRUE(all_close(x, before, 0, 0));
    Tensor g = c.all_gather(x);
    EXPECT_EQ(g.shape(), x.shape());
    EXPECT_TRUE(all_close(g, before, 0, 0));
    EXPECT_NE(g.raw_data(), x.raw_data());
    Tensor r = c.reduce_scatter(x);
    EXPECT_TRUE(all_close(r, before, 0, 0));
    EXPECT_EQ(r.dtype(), dt);
  }
  c.barrier();
  EXPECT_EQ(c.all_gather(scalar(3.0)).shape(), (Shape{1}));
}

TEST(DistLocal, ClearErrors) {
  dist::Communicator c = local();
  EXPECT_EMBER_ERROR(c.all_reduce(randint({4}, 0, 9), dist::ReduceOp::Mean), "mean of an int64 tensor");
  EXPECT_EMBER_ERROR(c.all_reduce(randn({4, 5}).t()), "not contiguous");
  EXPECT_EMBER_ERROR(c.all_reduce(Tensor()), "undefined");
  EXPECT_EMBER_ERROR(c.broadcast(randn({3}), 1), "root 1 is not a rank");
  EXPECT_EMBER_ERROR(c.reduce_scatter(scalar(1.0)), "multiple of the world size");
  c.finalize();
  EXPECT_EMBER_ERROR(c.all_reduce(randn({3})), "finalized");
}

TEST(DistLocal, BackendsNotBuiltSayHowToBuildThem) {
#ifndef EMBER_HAS_MPI
  EXPECT_FALSE(dist::mpi_built());
  EXPECT_EMBER_ERROR(dist::make_mpi_backend(), "built without MPI");
#else
  EXPECT_TRUE(dist::mpi_built());
#endif
#ifndef EMBER_HAS_NCCL
  EXPECT_FALSE(dist::nccl_built());
  EXPECT_EMBER_ERROR(dist::make_nccl_backend(0, 1, nullptr), "built without NCCL");
#endif
  EXPECT_EMBER_ERROR(dist::Communicator(nullptr), "CPU backend is null");
}

TEST(DistLocal, InitWithoutLauncherIsWorldSizeOne) {
  // ctest starts this binary without mpirun: no OMPI_*/PMI_* variables, so no MPI_Init.
  ASSERT_EQ(dist::launcher_world_size(), 1);
  EXPECT_EMBER_ERROR(dist::init({"carrier-pigeon", "auto"}), "expected auto, mpi or local");
  dist::Communicator& c = dist::init();
  EXPECT_TRUE(dist::initialized());
  EXPECT_EQ(&dist::world(), &c);
  EXPECT_EQ(c.world_size(), 1);
  EXPECT_EQ(c.backend_name(Device::CPU), "local");
  EXPECT_EQ(&dist::init(), &c);  // once per process
}

TEST(DistLocal, VerifySwitchAndGpuSelection) {
  dist::Communicator c = local();
  EXPECT_TRUE(c.verify());
  c.set_verify(false);
  EXPECT_FALSE(c.verify());
  EXPECT_NO_THROW(dist::select_local_gpu());  // no-op without NCCL or a GPU
}

TEST(DistLocalDeathTest, AbortEndsTheProcessWithTheCode) {
  // The child re-runs the binary up to this test instead of forking a process with OpenMP's threads.
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(dist::make_local_backend()->abort(7), ::testing::ExitedWithCode(7), "");
  EXPECT_EXIT(local().abort(5), ::testing::ExitedWithCode(5), "");
}

TEST(DistLocal, Timeout) {
  const double was = dist::timeout_seconds();
  dist::set_timeout_seconds(12.5);
  EXPECT_EQ(dist::timeout_seconds(), 12.5);
  EXPECT_EMBER_ERROR(dist::set_timeout_seconds(0), "positive");
  dist::set_timeout_seconds(was);
}

#if defined(EMBER_HAS_CUDA) && !defined(EMBER_HAS_NCCL)
TEST(DistLocal, CudaTensorsOnWorldSizeOne) {
  if (!cuda_available()) GTEST_SKIP() << cuda::unavailable_reason();
  dist::Communicator c = local();
  Tensor x = randn({5}).to(Device::CUDA);
  c.all_reduce(x);
  EXPECT_TRUE(all_close(c.all_gather(x).to(Device::CPU), x.to(Device::CPU), 0, 0));
}
#endif

}  // namespace
