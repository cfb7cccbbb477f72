// Communicator: the ranks of a data-parallel job and the collectives between them. It checks what
// every rank passes (a supported dtype, contiguous data, a device some backend serves, the same
// shape and dtype on every rank) and hands the tensor to the backend of its device: MPI for CPU
// tensors, NCCL for CUDA tensors, or the world-size-1 backend, which needs neither.
//
//   dist::Communicator& comm = dist::init();      // from mpirun's environment, or world size 1
//   comm.all_reduce(grad, dist::ReduceOp::Mean);  // in place
//   ...
//   dist::finalize();                             // at the normal end of main, on every rank
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "framework/train/dist/backend.h"
#include "framework/core/tensor.h"

namespace ember::dist {

class Communicator {
 public:
  // `cpu` serves CPU tensors, `cuda` (may be null) CUDA tensors; both span the same ranks.
  Communicator(std::shared_ptr<Backend> cpu, std::shared_ptr<Backend> cuda = nullptr);
  // The CUDA backend made by `make_cuda` at the first collective on a CUDA tensor (every rank
  // makes that call), so that CPU-only jobs on GPU machines never start NCCL.
  Communicator(std::shared_ptr<Backend> cpu, std::function<std::shared_ptr<Backend>()> make_cuda);

  int rank() const { return rank_; }
  int world_size() const { return world_; }
  bool is_root() const { return rank_ == 0; }
  std::string backend_name(Device d) const;  // "mpi", "nccl", "local", or "none" (a lazy one: its name once started)

  // In place on t's data (t must be contiguous; autograd is not involved). Mean: floating dtypes only.
  void all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum);
  // Starts the all-reduce and returns; the result is in t once the Work's wait() returns. Until
  // then t must be left alone. Collectives must be started in the same order on every rank.
  std::unique_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum);
  // Root's values into t on every rank.
  void broadcast(const Tensor& t, int root = 0);
  // Every rank's t, concatenated along dimension 0 in rank order: shape [world * n, ...] for t of
  // shape [n, ...] (and [world] for a 0-d t).
  Tensor all_gather(const Tensor& t);
  // The reduction of every rank's t, split along dimension 0 into world_size() equal blocks; this
  // rank gets block rank(): shape [n / world, ...]. n must be a multiple of the world size.
  Tensor reduce_scatter(const Tensor& t, ReduceOp op = ReduceOp::Sum);
  void barrier();

  // Before each collective, the ranks compare shape and dtype (one small extra all-reduce), so a
  // mismatch is an ember::Error on every rank rather than garbage or a hang. Hot loops that have
  // checked their layout once (DataParallel does) turn it off.
  void set_verify(bool on) { verify_ = on; }
  bool verify() const { return verify_; }

  void finalize();                   // ends the backends' sessions (MPI_Finalize); idempotent
  [[noreturn]] void abort(int code);  // ends every rank's process (MPI_Abort)

 private:
  Backend& backend_for(const Tensor& t, const char* op);
  Backend* cuda_backend(const char* op);  // starts a lazy one; null when there is none
  // The backend for the ranks' own small messages (shape checks, barrier): the CPU one, or NCCL
  // where no backend serves CPU tensors.
  Backend& control(const char* op);
  void check_same_everywhere(const Tensor& t, const char* op);

  std::shared_ptr<Backend> cpu_, cuda_;
  std::function<std::shared_ptr<Backend>()> make_cuda_;
  int rank_ = 0, world_ = 1;
  bool verify_ = true;
  bool finalized_ = false;
};

// How dist::init() picks its backends.
struct InitOptions {
  // "auto": MPI when the environment says mpirun started this process, else world size 1;
  // "mpi": MPI or an ember::Error; "local": world size 1 whatever the environment says.
  std::string backend = "auto";
  // CUDA tensors: "auto" (NCCL when built and world > 1, started at the first CUDA collective; the GPU
  // is picked now only if CUDA is in use already, so a CPU job opens neither), "nccl" (now), "none".
  // NCCL wants GPU local_rank % GPUs before the first CUDA tensor: else call select_local_gpu().
  std::string cuda = "auto";
};

// The process's communicator from the launcher's environment: mpirun's (OMPI_*/PMI_*/PMIX_*; RANK and
// WORLD_SIZE are checked against it), or RANK/WORLD_SIZE/EMBER_RENDEZVOUS_FILE: NCCL alone, for CUDA
// tensors only (file_rendezvous.h). Several ranks asked for in any other way: ember::Error saying how.
Communicator& init(const InitOptions& options = {});
bool initialized();
Communicator& world();  // the communicator init() made; an ember::Error before init()
void finalize();        // world().finalize() when init() was called; a no-op otherwise

// The ranks the launcher's environment asks for (1 when it says nothing), without starting MPI.
int launcher_world_size();

}  // namespace ember::dist
