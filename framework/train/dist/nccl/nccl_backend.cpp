// The NCCL backend: CUDA tensors between ranks, one GPU per rank. NCCL's unique id is made on
// rank 0 and handed to the others by a ShareBytes (MPI's broadcast, or a rendezvous file), as
// NCCL expects of its users. Collectives run on the legacy default stream, the one Ember's
// kernels use, so they are ordered with the kernels around them.
//
// The communicator is non-blocking (ncclConfig_t::blocking = 0): its start and every collective
// are waited for on the host against timeout_seconds(), watching ncclCommGetAsyncError, so that a
// rank that died becomes an ember::Error on the others (after ncclCommAbort, which frees the
// kernels stuck waiting for it) instead of a job that hangs forever. The price is one host wait
// per collective (at Work::wait(); all_reduce_async still overlaps the backward pass).
//
// Built as libember_nccl.so, loaded by framework/train/dist/nccl_loader.cpp on the first NCCL
// communicator, so that a CPU-only program maps neither NCCL nor the CUDA runtime.
#include <cstdlib>
#include <cstring>

#include "framework/train/dist/backend.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "framework/train/dist/nccl_hooks.h"
#include "framework/train/dist/poll.h"

namespace ember::dist {

namespace {

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
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float16: return ncclFloat16;
  }
  throw Error("dist (nccl): unknown dtype");
}
ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::Sum ? ncclSum : ncclAvg; }

// The launcher's rank on this machine picks the GPU (one GPU per rank). RANK last: a job started
// from RANK/WORLD_SIZE on one machine sets no local rank.
int local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK", "RANK"})
    if (const char* e = std::getenv(v)) return std::atoi(e);
  return 0;
}

void select_local_gpu_now() {
  if (!cuda_available()) return;
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices > 0) check_cuda(cudaSetDevice(local_rank() % devices), "cudaSetDevice");
}

class NcclBackend;

// A collective enqueued on the stream; done when the event recorded after it has happened.
class NcclWork : public Work {
 public:
  NcclWork(NcclBackend& b, const char* what);
  ~NcclWork() override;
  void wait() override;
  bool test() override;

 private:
  bool finished();  // throws when NCCL reports an error
  NcclBackend& b_;
  const char* what_;
  cudaEvent_t ev_ = nullptr;
  bool done_ = false;
};

class NcclBackend : public Backend {
 public:
  NcclBackend(int rank, int world, const ShareBytes& share_id) : rank_(rank), world_(world) {
    EMBER_CHECK(cuda_available(), "dist (nccl): no usable GPU: ", cuda::unavailable_reason());
    cuda::ensure_backend();
    check_local_gpu();
    ncclUniqueId id;
    if (rank == 0) {
      const ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) throw Error(str("dist (nccl): ncclGetUniqueId failed: ", ncclGetErrorString(r)));
    }
    if (world > 1) {
      EMBER_CHECK(share_id, "dist (nccl): world size ", world, " needs a way to hand out NCCL's id (MPI or a file)");
      share_id(&id, sizeof id);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    settle(ncclCommInitRankConfig(&comm_, world, id, rank, &config), "start (ncclCommInitRankConfig)");
  }
  ~NcclBackend() override {
    if (!comm_) return;
    // Finalize flushes this rank's work; bounded like everything else, so that a peer that died
    // cannot hang the exit either.
    ncclResult_t r = ncclCommFinalize(comm_);
    if (r == ncclInProgress) {
      ncclResult_t state = ncclInProgress;
      poll_until([&] { return ncclCommGetAsyncError(comm_, &state) != ncclSuccess || state != ncclInProgress; },
                 timeout_seconds());
      r = state;
    }
    if (r == ncclSuccess) ncclCommDestroy(comm_);
    else ncclCommAbort(comm_);
  }
  std::string name() const override { return "nccl"; }
  bool serves(Device d) const override { return d == Device::CUDA; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  void all_reduce(const Tensor& t, ReduceOp op) override { all_reduce_async(t, op)->wait(); }
  std::unique_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op) override {
    return launch("all_reduce", [&] {
      return ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), nccl_op(op), comm_,
                           cudaStreamLegacy);
    });
  }
  void broadcast(const Tensor& t, int root) override {
    launch("broadcast", [&] {
      return ncclBroadcast(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl_type(t.dtype()), root, comm_,
                           cudaStreamLegacy);
    })->wait();
  }
  void all_gather(const Tensor& in, const Tensor& out) override {
    launch("all_gather", [&] {
      return ncclAllGather(in.raw_data(), out.raw_data(), size_t(in.numel()), nccl_type(in.dtype()), comm_,
                           cudaStreamLegacy);
    })->wait();
  }
  void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) override {
    launch("reduce_scatter", [&] {
      return ncclReduceScatter(in.raw_data(), out.raw_data(), size_t(out.numel()), nccl_type(in.dtype()), nccl_op(op),
                               comm_, cudaStreamLegacy);
    })->wait();
  }
  // NCCL has no barrier: an all-reduce of one value, waited for on the host.
  void barrier() override {
    Tensor one = zeros({1}, DType::Float32, Device::CUDA);
    all_reduce(one, ReduceOp::Sum);
  }

  // NCCL's verdict on the communicator: ncclSuccess, ncclInProgress, or the error it hit.
  ncclResult_t async_state() {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    return r != ncclSuccess ? r : state;
  }
  // After an error or a timeout the communicator is unusable: abort it (which also ends kernels
  // still waiting for a dead peer) and say so on every later call.
  [[noreturn]] void fail(ncclResult_t r, const char* what) {
    const std::string detail = comm_ ? ncclGetLastError(comm_) : "";
    abort_comm();
    throw Error(str("dist (nccl): ", what, " on rank ", rank_, " of ", world_, " failed: ", ncclGetErrorString(r),
                    detail.empty() ? "" : " (" + detail + ")", "; the NCCL communicator was aborted"));
  }
  [[noreturn]] void timed_out(const char* what) {
    abort_comm();
    throw Error(str("dist (nccl): ", what, " on rank ", rank_, " of ", world_, " got no answer from the other ranks "
                    "within ", timeout_seconds(), " s (did a rank die, or stop calling the same collectives in the "
                    "same order?); the NCCL communicator was aborted and the job cannot continue "
                    "(EMBER_DIST_TIMEOUT_S sets the limit)"));
  }

 private:
  // With several GPUs each rank must be on its own before NCCL starts (and before its first
  // CUDA tensor, which lives on the GPU that was current when it was made).
  void check_local_gpu() {
    if (world_ == 1) return;
    int devices = 0, current = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check_cuda(cudaGetDevice(&current), "cudaGetDevice");
    if (devices <= 1) return;
    const int expected = local_rank() % devices;
    EMBER_CHECK(current == expected, "dist (nccl): rank ", rank_, " of ", world_, " is on GPU ", current,
                " but its local rank picks GPU ", expected, " of ", devices, " (one GPU per rank). Expected "
                "dist::select_local_gpu() before the first CUDA tensor: dist::init() calls it with cuda = \"nccl\", "
                "or when the program asked cuda_available() before init()");
  }

  // A call on the non-blocking communicator returns ncclInProgress while NCCL finishes it in the
  // background; the next call may only come once ncclCommGetAsyncError says it is done.
  void settle(ncclResult_t r, const char* what) {
    if (r == ncclInProgress) {
      if (!poll_until([&] { return (r = async_state()) != ncclInProgress; }, timeout_seconds())) timed_out(what);
    }
    if (r != ncclSuccess) fail(r, what);
  }

  template <class Call>
  std::unique_ptr<Work> launch(const char* what, Call call) {
    EMBER_CHECK(comm_, "dist (nccl): ", what, " on rank ", rank_, ": the NCCL communicator was aborted after an "
                "earlier error or timeout; the job cannot continue");
    settle(call(), what);
    return std::make_unique<NcclWork>(*this, what);
  }

  void abort_comm() {
    if (!comm_) return;
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  ncclComm_t comm_ = nullptr;
  int rank_, world_;

  friend class NcclWork;
};

NcclWork::NcclWork(NcclBackend& b, const char* what) : b_(b), what_(what) {
  check_cuda(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check_cuda(cudaEventRecord(ev_, cudaStreamLegacy), "cudaEventRecord");
}

NcclWork::~NcclWork() {
  // Dropped unfinished (an exception elsewhere): its buffers must not go while NCCL writes them.
  if (!done_) try { wait(); } catch (...) {}
  if (ev_) cudaEventDestroy(ev_);
}

bool NcclWork::finished() {
  const cudaError_t e = cudaEventQuery(ev_);
  if (e == cudaSuccess) return true;
  if (e != cudaErrorNotReady) check_cuda(e, what_);
  if (!b_.comm_) throw Error(str("dist (nccl): ", what_, ": the NCCL communicator was aborted while it ran"));
  const ncclResult_t state = b_.async_state();
  if (state != ncclSuccess && state != ncclInProgress) b_.fail(state, what_);
  return false;
}

void NcclWork::wait() {
  if (done_) return;
  done_ = true;
  if (!poll_until([&] { return finished(); }, timeout_seconds())) b_.timed_out(what_);
}

bool NcclWork::test() {
  if (done_) return true;
  if (!finished()) return false;
  done_ = true;
  return true;
}

const bool registered = [] {
  nccl_hooks::make_backend.set([](int rank, int world, const ShareBytes& share_id) -> std::shared_ptr<Backend> {
    return std::make_shared<NcclBackend>(rank, world, share_id);
  });
  nccl_hooks::select_local_gpu.set(&select_local_gpu_now);
  return true;
}();

}  // namespace
}  // namespace ember::dist
