// The NCCL backend with world size 1 (a one-rank NCCL communicator needs no MPI): CUDA tensors
// go through NCCL's own calls and must come back unchanged. Runs where there is a GPU
// (scripts/gpu_check.sh runs every *Cuda* suite); skips elsewhere.
#include <gtest/gtest.h>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::all_close;

namespace {

#ifdef EMBER_HAS_NCCL
TEST(DistNcclCuda, WorldSizeOneCollectives) {
  if (!cuda_available()) GTEST_SKIP() << cuda::unavailable_reason();
  dist::Communicator c(dist::make_local_backend(), dist::make_nccl_backend(0, 1, nullptr));
  EXPECT_EQ(c.backend_name(Device::CUDA), "nccl");
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor host = dt == DType::Int64 ? randint({1023}, -9, 9) : randn({1023}, dt);
    Tensor x = host.to(Device::CUDA);
    c.all_reduce(x);
    if (dt != DType::Int64) c.all_reduce(x, dist::ReduceOp::Mean);
    c.broadcast(x, 0);
    EXPECT_TRUE(all_close(x.to(Device::CPU), host, 0, 0)) << dt;
    EXPECT_TRUE(all_close(c.all_gather(x).to(Device::CPU), host, 0, 0)) << dt;
    EXPECT_TRUE(all_close(c.reduce_scatter(x).to(Device::CPU), host, 0, 0)) << dt;
  }
  c.barrier();
  c.finalize();
}

TEST(DistNcclCuda, DataParallelOnTheGpu) {
  if (!cuda_available()) GTEST_SKIP() << cuda::unavailable_reason();
  dist::Communicator c(dist::make_local_backend(), dist::make_nccl_backend(0, 1, nullptr));
  Tensor w = randn({5}).to(Device::CUDA).requires_grad_();
  dist::DataParallel d(std::vector<Tensor>{w}, c);
  d.backward(sum(w * w));
  EXPECT_TRUE(all_close(w.grad().to(Device::CPU), (w.detach() * 2.0).to(Device::CPU), 1e-6, 1e-6));
}
#else
TEST(DistNcclCuda, NotBuilt) { EXPECT_EMBER_ERROR(dist::make_nccl_backend(0, 1, nullptr), "built without NCCL"); }
#endif

}  // namespace
