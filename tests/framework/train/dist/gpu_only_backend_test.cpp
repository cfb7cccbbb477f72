// The CPU side of ranks started from RANK/WORLD_SIZE and a rendezvous file: it knows the ranks,
// and every CPU collective says that CPU tensors between processes need mpirun.
#include <gtest/gtest.h>

#include "ember.h"
#include "test_util.h"

using namespace ember;

namespace {

TEST(DistGpuOnly, KnowsTheRanks) {
  auto b = dist::make_gpu_only_backend(1, 3);
  EXPECT_EQ(b->rank(), 1);
  EXPECT_EQ(b->world_size(), 3);
  EXPECT_FALSE(b->serves(Device::CPU));
  EXPECT_FALSE(b->serves(Device::CUDA));
  EXPECT_EMBER_ERROR(dist::make_gpu_only_backend(3, 3), "expected 0 <= rank < world");
  EXPECT_EMBER_ERROR(dist::make_gpu_only_backend(-1, 2), "expected 0 <= rank < world");
}

TEST(DistGpuOnly, CpuCollectivesSayMpirunIsNeeded) {
  dist::Communicator c(dist::make_gpu_only_backend(0, 2));
  EXPECT_EQ(c.world_size(), 2);
  Tensor x = randn({4, 3});
  EXPECT_EMBER_ERROR(c.all_reduce(x), "dist all_reduce: a cpu tensor between 2 ranks");
  EXPECT_EMBER_ERROR(c.all_reduce(x), "mpirun -np 2");
  EXPECT_EMBER_ERROR(c.broadcast(x), "dist broadcast: ");
  EXPECT_EMBER_ERROR(c.all_gather(x), "CPU tensors between processes need MPI");
  EXPECT_EMBER_ERROR(c.reduce_scatter(x), "dist reduce_scatter: ");
  EXPECT_EMBER_ERROR(c.barrier(), "dist barrier: ");
  // The backend refuses on its own too (the communicator is not the only caller).
  auto b = dist::make_gpu_only_backend(0, 2);
  EXPECT_EMBER_ERROR(b->all_reduce(x, dist::ReduceOp::Sum), "need MPI");
}

TEST(DistGpuOnly, DataParallelOnCpuSaysWhatToDo) {
  dist::Communicator c(dist::make_gpu_only_backend(1, 2));
  Tensor w = randn({5}).requires_grad_();
  EXPECT_EMBER_ERROR(dist::DataParallel(std::vector<Tensor>{w}, c), "mpirun -np 2 <program>");
}

// A backend for CUDA tensors only, standing in for NCCL.
class CudaOnly : public dist::Backend {
 public:
  std::string name() const override { return "cuda-only"; }
  bool serves(Device d) const override { return d == Device::CUDA; }
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  void all_reduce(const Tensor&, dist::ReduceOp) override {}
  void broadcast(const Tensor&, int) override {}
  void all_gather(const Tensor&, const Tensor&) override {}
  void reduce_scatter(const Tensor&, const Tensor&, dist::ReduceOp) override {}
  void barrier() override { ++barriers; }
  int barriers = 0;
};

TEST(DistGpuOnly, TheCudaBackendServesTheRanksOwnMessages) {
  // A backend that serves no tensors may take the CPU slot; one for CUDA tensors only may not.
  EXPECT_EMBER_ERROR(dist::Communicator(std::make_shared<CudaOnly>()), "expected it as the CUDA backend");
  auto cuda = std::make_shared<CudaOnly>();
  dist::Communicator c(dist::make_gpu_only_backend(0, 2), cuda);
  EXPECT_EQ(c.backend_name(Device::CUDA), "cuda-only");
  c.barrier();  // NCCL's barrier, since nothing else connects the ranks
  EXPECT_EQ(cuda->barriers, 1);
  EXPECT_EMBER_ERROR(c.all_reduce(randn({3})), "need MPI");
}

}  // namespace
