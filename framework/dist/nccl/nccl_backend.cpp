// The NCCL backend: CUDA tensors between ranks, one GPU per rank. NCCL's unique id is made on
// rank 0 and handed to the others through another backend's broadcast (MPI), as NCCL expects of
// its users. Collectives run on the legacy default stream, the one Ember's kernels use, so they
// are ordered with the kernels around them and no host synchronisation is needed.
//
// Built as libember_nccl.so, loaded by framework/dist/nccl_loader.cpp on the first NCCL
// communicator, so that a CPU-only program maps neither NCCL nor the CUDA runtime.
#include <cstdlib>
#include <cstring>

#include "framework/dist/backend.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include "framework/cuda/check.h"
#include "framework/cuda/cuda.h"
#include "framework/dist/nccl_hooks.h"

namespace ember::dist {

namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(str("dist (nccl): ", what, " failed: ", ncclGetErrorString(r)));
}
void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error(str("dist (nccl): ", what, " failed: ", cudaGetErrorString(e)));
  }
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Int64: return ncclInt64;
    case DType::Bool: throw Error("dist (nccl): bool tensors are not communicated; convert with .to(DType::Int64)");
  }
  throw Error("dist (nccl): unknown dtype");
}
ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::Sum ? ncclSum : ncclAvg; }

// The launcher's rank on this machine picks the GPU (one GPU per rank).
int local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK"})
    if (const char* e = std::getenv(v)) return std::atoi(e);
  return 0;
}

void select_local_gpu_now() {
  if (!cuda_available()) return;
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices > 0) check_cuda(cudaSetDevice(local_rank() % devices), "cudaSetDevice");
}

class NcclBackend : public Backend {
 public:
  NcclBackend(int rank, int world, Backend* share_id) : rank_(rank), world_(world) {
    EMBER_CHECK(cuda_available(), "dist (nccl): no usable GPU: ", cuda::unavailable_reason());
    cuda::ensure_backend();
    ncclUniqueId id;
    if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    if (world > 1) {
      EMBER_CHECK(share_id, "dist (nccl): world size ", world, " needs a backend to hand out NCCL's id (MPI)");
      static_assert(sizeof(ncclUniqueId) % 8 == 0, "ncclUniqueId is a whole number of int64s");
      Tensor bytes = zeros({int64_t(sizeof(ncclUniqueId) / 8)}, DType::Int64);
      if (rank == 0) std::memcpy(bytes.raw_data(), &id, sizeof id);
      share_id->broadcast(bytes, 0);
      std::memcpy(&id, bytes.raw_data(), sizeof id);
    }
    check_nccl(ncclCommInitRank(&comm_, world, id, rank), "ncclCommInitRank");
  }
  ~NcclBackend() override {
    if (comm_) ncclCommDestroy(comm_);
  }
  std::string name() const override { return "nccl"; }
  bool serves(Device d) const override { return d == Device::CUDA; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  void all_reduce(const Tensor& t, ReduceOp op) override {
    check_nccl(ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), nccl_op(op), comm_,
                             cudaStreamLegacy),
               "ncclAllReduce");
  }
  void broadcast(const Tensor& t, int root) override {
    check_nccl(ncclBroadcast(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), root, comm_,
                             cudaStreamLegacy),
               "ncclBroadcast");
  }
  void all_gather(const Tensor& in, const Tensor& out) override {
    check_nccl(ncclAllGather(in.raw_data(), out.raw_data(), size_t(in.numel()), nccl_type(in.dtype()), comm_,
                             cudaStreamLegacy),
               "ncclAllGather");
  }
  void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) override {
    check_nccl(ncclReduceScatter(in.raw_data(), out.raw_data(), size_t(out.numel()), nccl_type(in.dtype()), nccl_op(op),
                                 comm_, cudaStreamLegacy),
               "ncclReduceScatter");
  }
  // NCCL has no barrier: an all-reduce of one value, waited for on the host.
  void barrier() override {
    Tensor one = zeros({1}, DType::Float32, Device::CUDA);
    all_reduce(one, ReduceOp::Sum);
    check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  }

 private:
  ncclComm_t comm_ = nullptr;
  int rank_, world_;
};

const bool registered = [] {
  nccl_hooks::make_backend.set([](int rank, int world, Backend* share_id) -> std::shared_ptr<Backend> {
    return std::make_shared<NcclBackend>(rank, world, share_id);
  });
  nccl_hooks::select_local_gpu.set(&select_local_gpu_now);
  return true;
}();

}  // namespace
}  // namespace ember::dist
