// The collectives on 2 ranks (ember_mpi_tests, started by mpirun from CTest): each one against
// its definition on random tensors that every rank can compute for every other rank (rank r's
// input comes from seed r), over odd sizes and the three dtypes.
#include <gtest/gtest.h>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::all_close;

// Set by mpi_test_main.cpp right after init({"mpi", "auto"}), before any test touched CUDA.
extern bool nccl_loaded_after_init, cuda_loaded_after_init;

namespace {

dist::Communicator& comm() { return dist::world(); }

// Rank r's input for a test case: the same tensor on whichever rank computes it.
Tensor input(int r, const Shape& shape, DType dt, uint64_t salt) {
  Generator g(salt * 131 + uint64_t(r));
  if (dt == DType::Int64) return randint(shape, -1000, 1000, &g);
  return randn(shape, dt, &g);
}

const std::vector<Shape> kShapes = {{1}, {7}, {3, 5}, {1023}, {65537}, {2, 3, 11}};
const std::vector<DType> kTypes = {DType::Float32, DType::Float64, DType::Int64};

double tol(DType dt) { return dt == DType::Float32 ? 1e-5 : dt == DType::Float64 ? 1e-12 : 0; }

TEST(DistMpi, WorldIsTwoRanksOverMpi) {
  EXPECT_EQ(comm().world_size(), 2);
  EXPECT_EQ(comm().backend_name(Device::CPU), "mpi");
  EXPECT_EQ(dist::launcher_world_size(), 2);
}

TEST(DistMpi, CpuJobOpensNeitherNcclNorCuda) {
  EXPECT_FALSE(nccl_loaded_after_init);
  EXPECT_FALSE(cuda_loaded_after_init);
}

TEST(DistMpi, ShareByBroadcastHandsOutRootsBytes) {
  // NCCL's id travels this way: rank 0's 128 random bytes (and an odd size) on every rank.
  dist::Backend& b = *dist::make_mpi_backend();
  for (size_t n : {size_t(128), size_t(13)}) {
    std::vector<uint8_t> root(n), bytes(n, uint8_t(comm().rank() + 1));
    Generator g(n);
    const std::vector<int64_t> r = randint({int64_t(n)}, 0, 256, &g).to_vector<int64_t>();
    for (size_t i = 0; i < n; ++i) root[i] = uint8_t(r[i]);
    if (comm().rank() == 0) bytes = root;
    dist::share_by_broadcast(b)(bytes.data(), n);
    EXPECT_EQ(bytes, root) << n;
  }
}

TEST(DistMpi, AllReduceSumAndMean) {
  const int W = comm().world_size();
  uint64_t salt = 0;
  for (DType dt : kTypes)
    for (const Shape& s : kShapes) {
      ++salt;
      Tensor sum = zeros(s, dt);
      for (int r = 0; r < W; ++r) sum = add(sum, input(r, s, dt, salt));
      Tensor x = input(comm().rank(), s, dt, salt);
      comm().all_reduce(x, dist::ReduceOp::Sum);
      EXPECT_TRUE(all_close(x, sum, tol(dt), tol(dt))) << dt << " " << to_string(s);
      if (dt == DType::Int64) continue;
      Tensor y = input(comm().rank(), s, dt, salt);
      comm().all_reduce_async(y, dist::ReduceOp::Mean)->wait();
      EXPECT_TRUE(all_close(y, sum * (1.0 / W), tol(dt), tol(dt))) << dt << " " << to_string(s);
    }
}

TEST(DistMpi, BroadcastFromEachRoot) {
  uint64_t salt = 100;
  for (int root = 0; root < comm().world_size(); ++root)
    for (DType dt : kTypes)
      for (const Shape& s : kShapes) {
        ++salt;
        Tensor x = input(comm().rank(), s, dt, salt);
        comm().broadcast(x, root);
        EXPECT_TRUE(all_close(x, input(root, s, dt, salt), 0, 0)) << "root " << root << " " << dt;
      }
}

TEST(DistMpi, AllGatherConcatenatesInRankOrder) {
  uint64_t salt = 200;
  for (DType dt : kTypes)
    for (const Shape& s : kShapes) {
      ++salt;
      Tensor got = comm().all_gather(input(comm().rank(), s, dt, salt));
      std::vector<Tensor> parts;
      for (int r = 0; r < comm().world_size(); ++r) parts.push_back(input(r, s, dt, salt));
      EXPECT_TRUE(all_close(got, concat(parts, 0), 0, 0)) << dt << " " << to_string(s);
    }
  Tensor g = comm().all_gather(scalar(double(comm().rank() + 1), DType::Float64));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 2}));
}

TEST(DistMpi, ReduceScatterGivesEachRankItsBlock) {
  const int W = comm().world_size();
  uint64_t salt = 300;
  for (DType dt : kTypes)
    for (Shape s : kShapes) {
      ++salt;
      s[0] *= W;  // a multiple of the world size, still odd in the other dimensions
      Tensor sum = zeros(s, dt);
      for (int r = 0; r < W; ++r) sum = add(sum, input(r, s, dt, salt));
      const int64_t block = s[0] / W;
      Tensor want = sum.narrow(0, comm().rank() * block, block).contiguous();
      Tensor got = comm().reduce_scatter(input(comm().rank(), s, dt, salt));
      EXPECT_TRUE(all_close(got, want, tol(dt), tol(dt))) << dt << " " << to_string(s);
      if (dt == DType::Int64) continue;
      Tensor mean = comm().reduce_scatter(input(comm().rank(), s, dt, salt), dist::ReduceOp::Mean);
      EXPECT_TRUE(all_close(mean, want * (1.0 / W), tol(dt), tol(dt)));
    }
}

TEST(DistMpi, BarrierAndManyAsyncInFlight) {
  comm().barrier();
  std::vector<Tensor> xs;
  std::vector<std::unique_ptr<dist::Work>> works;
  for (int k = 0; k < 9; ++k) {
    xs.push_back(full({101 + k}, double(comm().rank() + k), DType::Float64));
    works.push_back(comm().all_reduce_async(xs.back()));
  }
  for (int k = 8; k >= 0; --k) works[size_t(k)]->wait();  // any order of waiting
  for (int k = 0; k < 9; ++k) EXPECT_EQ(xs[size_t(k)].at({0}), double(2 * k + 1));
  comm().barrier();
}

TEST(DistMpi, MismatchedShapesOrDtypesFailOnEveryRank) {
  const int r = comm().rank();
  EXPECT_EMBER_ERROR(comm().all_reduce(zeros({r == 0 ? 4 : 5})), "rank 0 passed a float32 cpu tensor of shape [4] but rank 1 a float32 cpu tensor of shape [5]");
  EXPECT_EMBER_ERROR(comm().broadcast(zeros({3}, r == 0 ? DType::Float32 : DType::Float64)), "expected the same shape, dtype and device");
  EXPECT_EMBER_ERROR(comm().all_gather(zeros(r == 0 ? Shape{2, 3} : Shape{3, 2})), "shape [2, 3]");
  // The ranks agree again afterwards.
  Tensor x = ones({3});
  comm().all_reduce(x);
  EXPECT_EQ(x.at({2}), 2.0);
}

TEST(DistMpi, CudaTensorsWithoutNcclAreAClearError) {
#ifdef EMBER_HAS_NCCL
  GTEST_SKIP() << "NCCL is built: scripts/gpu_check.sh tests CUDA tensors";
#else
  if (!cuda_available()) GTEST_SKIP() << "no GPU: no CUDA tensor to pass";
  EXPECT_EMBER_ERROR(comm().all_reduce(zeros({3}, DType::Float32, Device::CUDA)), "no backend for cuda tensors");
#endif
}

}  // namespace

namespace {

// CUDA tensors over NCCL on 2 ranks, one GPU each (scripts/gpu_check.sh on a 2-GPU machine).
TEST(DistMpiNccl, CollectivesOnCudaTensors) {
  if (!dist::nccl_built() || !cuda_available()) GTEST_SKIP() << "needs NCCL and GPUs";
  // init() left the GPU alone (CUDA was not in use then): pick this rank's before its first tensor.
  dist::select_local_gpu();
  dist::Communicator& c = dist::world();
  Tensor x = full({1023}, double(c.rank() + 1), DType::Float32).to(Device::CUDA);
  c.all_reduce(x);
  EXPECT_EQ(c.backend_name(Device::CUDA), "nccl");
  EXPECT_TRUE(all_close(x.to(Device::CPU), full({1023}, 3.0), 0, 0));
  Tensor g = c.all_gather(full({2}, double(c.rank()), DType::Float64).to(Device::CUDA)).to(Device::CPU);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0, 1, 1}));
  Tensor rs = c.reduce_scatter(arange(4, DType::Int64).to(Device::CUDA)).to(Device::CPU);
  EXPECT_EQ(rs.to_vector<int64_t>(), (std::vector<int64_t>{4 * c.rank(), 4 * c.rank() + 2}));
  Tensor b = full({3}, double(c.rank()), DType::Float64).to(Device::CUDA);
  c.broadcast(b, 1);
  EXPECT_EQ(b.to(Device::CPU).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  c.barrier();
}

}  // namespace
