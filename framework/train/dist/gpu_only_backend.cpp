// The CPU side of a job started from RANK/WORLD_SIZE and a rendezvous file, without mpirun: the
// file hands out NCCL's id only, so nothing moves CPU tensors between the processes (Ember builds
// no transport of its own; MPI is the one for CPU tensors).
#include "framework/train/dist/backend.h"

namespace ember::dist {
namespace {

class GpuOnlyBackend : public Backend {
 public:
  GpuOnlyBackend(int rank, int world) : rank_(rank), world_(world) {}
  std::string name() const override { return "none (RANK/WORLD_SIZE without mpirun)"; }
  bool serves(Device) const override { return false; }
  std::string unserved(Device d) const override {
    return str("a ", d, " tensor between ", world_, " ranks started from RANK/WORLD_SIZE and a rendezvous file; that "
               "start connects NCCL, for CUDA tensors only. CPU tensors between processes need MPI: start the "
               "program with `mpirun -np ", world_, " <program>` (without RANK/WORLD_SIZE/EMBER_RENDEZVOUS_FILE), "
               "or keep the model and the tensors you pass on CUDA");
  }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  void all_reduce(const Tensor& t, ReduceOp) override { refuse("all_reduce", t.device()); }
  void broadcast(const Tensor& t, int) override { refuse("broadcast", t.device()); }
  void all_gather(const Tensor& in, const Tensor&) override { refuse("all_gather", in.device()); }
  void reduce_scatter(const Tensor& in, const Tensor&, ReduceOp) override { refuse("reduce_scatter", in.device()); }
  void barrier() override { refuse("barrier", Device::CPU); }

 private:
  [[noreturn]] void refuse(const char* op, Device d) const { throw Error(str("dist ", op, ": ", unserved(d))); }
  int rank_, world_;
};

}  // namespace

std::shared_ptr<Backend> make_gpu_only_backend(int rank, int world) {
  EMBER_CHECK(world >= 1 && rank >= 0 && rank < world, "dist::make_gpu_only_backend: rank ", rank, " of ", world,
              ", expected 0 <= rank < world");
  return std::make_shared<GpuOnlyBackend>(rank, world);
}

}  // namespace ember::dist
