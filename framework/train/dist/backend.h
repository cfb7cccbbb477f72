// Backend: one transport for collectives (MPI, NCCL, or the world-size-1 stand-in). Backends see
// tensors the Communicator has already checked (contiguous, a supported dtype, a device they
// serve, matching shapes), so each one is only the calls into its library.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "framework/core/tensor.h"

namespace ember::dist {

enum class ReduceOp { Sum, Mean };
inline const char* name(ReduceOp op) { return op == ReduceOp::Sum ? "sum" : "mean"; }

// A collective that was started and may still be running; its result is in place once wait()
// returns. test() lets the transport make progress (MPI moves non-blocking work only when called).
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
  virtual bool test() { wait(); return true; }
};

// Work that was finished when it was handed out.
class DoneWork : public Work {
 public:
  void wait() override {}
  bool test() override { return true; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "mpi", "nccl", "local"
  virtual bool serves(Device d) const = 0;
  // Why a collective on a `d` tensor cannot run here (asked when serves(d) is false), with what to do.
  virtual std::string unserved(Device d) const;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place on t. Mean is only asked for on floating tensors.
  virtual void all_reduce(const Tensor& t, ReduceOp op) = 0;
  // Default: blocking, then done.
  virtual std::unique_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op) {
    all_reduce(t, op);
    return std::make_unique<DoneWork>();
  }
  virtual void broadcast(const Tensor& t, int root) = 0;
  // out holds world_size() copies of in's element count, rank i's at i * in.numel().
  virtual void all_gather(const Tensor& in, const Tensor& out) = 0;
  // out holds in.numel() / world_size() elements: this rank's block of the reduced `in`.
  virtual void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op) = 0;
  virtual void barrier() = 0;
  // Ends the transport's session (MPI_Finalize) on a normal exit; every rank calls it.
  virtual void finalize() {}
  // Ends every rank's process at once (after an error that the other ranks cannot see).
  [[noreturn]] virtual void abort(int code);
};

// World size 1 on any device: every collective is the identity (a copy where out is separate).
std::shared_ptr<Backend> make_local_backend();
// MPI_COMM_WORLD of a process started by mpirun (MPI_Init on the first call). Throws ember::Error
// when Ember was built without MPI.
std::shared_ptr<Backend> make_mpi_backend();
bool mpi_built();
// How long a collective on the MPI backend waits for the other ranks before it throws ember::Error
// (a rank that died or stopped calling collectives); default 300 s, or EMBER_DIST_TIMEOUT_S.
void set_timeout_seconds(double seconds);
double timeout_seconds();
// Hands rank 0's `n` bytes at `bytes` to every rank (in place): how NCCL's unique id travels.
using ShareBytes = std::function<void(void* bytes, size_t n)>;
// Through `b`'s broadcast from rank 0 (MPI). `b` must outlive the result.
ShareBytes share_by_broadcast(Backend& b);

// NCCL over the GPUs of `world` ranks. `share_id` hands rank 0's id to every rank (see
// share_by_broadcast, and share_through_file in file_rendezvous.h); with world == 1 it is not
// called and may be null. Initialisation and every collective wait at most timeout_seconds() for
// the other ranks, then abort the NCCL communicator and throw ember::Error. Throws ember::Error
// when Ember was built without NCCL, no GPU is usable, or this process's current GPU is not the
// one select_local_gpu() picks (with several GPUs).
std::shared_ptr<Backend> make_nccl_backend(int rank, int world, ShareBytes share_id);
// The same, the id through share_id's broadcast (MPI); `share_id` may be null when world == 1.
std::shared_ptr<Backend> make_nccl_backend(int rank, int world, Backend* share_id);
// libember_nccl.so exists beside the core (it is not opened to find out).
bool nccl_built();
// Whether this process has tried to open libember_nccl.so (that maps NCCL and CUDA where it exists).
bool nccl_loaded();
// Whether this process has opened the CUDA backend (libember_cuda.so: a CUDA tensor was made, or
// cuda_available() was asked), found without opening it.
bool cuda_loaded();
// With NCCL built and a GPU present: makes GPU (launcher's local rank % GPUs) this process's
// current device, one GPU per rank. A no-op otherwise. Opens libember_nccl.so when it is built.
void select_local_gpu();

// The CPU side of a job whose ranks were started without MPI (RANK/WORLD_SIZE and a rendezvous
// file): it knows the ranks and serves no tensors; its collectives throw ember::Error saying that
// CPU tensors between processes need mpirun. NCCL serves the CUDA tensors of such a job.
std::shared_ptr<Backend> make_gpu_only_backend(int rank, int world);

}  // namespace ember::dist
