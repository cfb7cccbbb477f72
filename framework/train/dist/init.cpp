// dist::init(): the process's communicator from the launcher's environment.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "framework/train/dist/communicator.h"
#include "framework/train/dist/file_rendezvous.h"

namespace ember::dist {

namespace {
std::unique_ptr<Communicator>& slot() {
  static std::unique_ptr<Communicator> c;
  return c;
}

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  long v = std::strtol(e, &end, 10);
  EMBER_CHECK(*end == 0 && v >= 0 && v < (1 << 24), "dist::init: ", name, "='", e, "', expected a non-negative integer");
  return int(v);
}

// Variables that mpirun (OpenMPI), Hydra (MPICH) or PMIx set in every process they start.
const char* mpi_size_variable() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (std::getenv(v)) return v;
  return nullptr;
}
}  // namespace

int launcher_world_size() {
  if (const char* v = mpi_size_variable()) return env_int(v, 1);
  return env_int("WORLD_SIZE", 1);
}

namespace {
// RANK/WORLD_SIZE and a rendezvous file, no mpirun: NCCL's id through the file, NCCL for CUDA
// tensors, nothing for CPU tensors (make_gpu_only_backend says so when one is passed).
std::unique_ptr<Communicator> start_from_rendezvous(const InitOptions& o, int world) {
  const char* path = std::getenv(kRendezvousFileVariable);
  EMBER_CHECK(path && *path, "dist::init: WORLD_SIZE=", world, " asks for several ranks, but this process was not "
              "started by mpirun. Expected `mpirun -np ", world, " <program>` (CPU or CUDA tensors), or, for CUDA "
              "tensors over NCCL, RANK=<0..", world - 1, "> and ", kRendezvousFileVariable,
              "=<a path every rank can see> in each rank's environment (examples/classifier/README.md, \"Data-parallel training\")");
  EMBER_CHECK(std::getenv("RANK"), "dist::init: WORLD_SIZE=", world, " and ", kRendezvousFileVariable,
              " are set, but RANK is not (expected RANK=<0..", world - 1, "> in each rank's environment)");
  const int rank = env_int("RANK", 0);
  EMBER_CHECK(rank < world, "dist::init: RANK=", rank, ", expected less than WORLD_SIZE=", world);
  EMBER_CHECK(o.cuda != "none", "dist::init: RANK/WORLD_SIZE with ", kRendezvousFileVariable,
              " start NCCL, for CUDA tensors only, but cuda = \"none\" was asked for (expected cuda = \"auto\" or "
              "\"nccl\"; CPU tensors between processes need `mpirun -np ", world, " <program>`)");
  EMBER_CHECK(nccl_built(), "dist::init: RANK/WORLD_SIZE with ", kRendezvousFileVariable, " start NCCL, for CUDA "
              "tensors, but this Ember was built without NCCL (expected a build with CUDA and NCCL; CPU tensors "
              "between processes need `mpirun -np ", world, " <program>` instead)");
  select_local_gpu();
  std::shared_ptr<Backend> nccl;
  try {
    nccl = make_nccl_backend(rank, world, share_through_file(path, rendezvous_job_token(), rank, world, timeout_seconds()));
  } catch (...) {
    if (rank == 0) std::remove(path);  // an id nobody will join; a later job must not find it
    throw;
  }
  // NCCL's start returned on rank 0, so every rank has joined and read the file: a later job on
  // the same path must not find this one's id.
  if (rank == 0) remove_rendezvous(path);
  return std::make_unique<Communicator>(make_gpu_only_backend(rank, world), nccl);
}
}  // namespace

Communicator& init(const InitOptions& o) {
  if (slot()) return *slot();
  EMBER_CHECK(o.backend == "auto" || o.backend == "mpi" || o.backend == "local", "dist::init: backend '", o.backend,
              "', expected auto, mpi or local");
  EMBER_CHECK(o.cuda == "auto" || o.cuda == "nccl" || o.cuda == "none", "dist::init: cuda backend '", o.cuda,
              "', expected auto, nccl or none");
  const bool launched_by_mpi = mpi_size_variable() != nullptr;
  const int wanted = launcher_world_size();
  std::shared_ptr<Backend> cpu;
  if (o.backend == "local") {
    cpu = make_local_backend();
  } else if (o.backend == "mpi" || launched_by_mpi) {
    EMBER_CHECK(mpi_built(), "dist::init: ", launched_by_mpi ? "mpirun started this process" : "the MPI backend was asked for",
                " (", wanted, " ranks), but this Ember was built without MPI (expected a build configured where "
                "libopenmpi-dev is installed, EMBER_MPI=AUTO or ON)");
    cpu = make_mpi_backend();
    EMBER_CHECK(cpu->world_size() == wanted || !launched_by_mpi, "dist::init: MPI reports ", cpu->world_size(),
                " ranks, the launcher's environment ", wanted);
  } else if (wanted > 1) {
    slot() = start_from_rendezvous(o, wanted);
    return *slot();
  } else {
    cpu = make_local_backend();
  }
  if (const char* r = std::getenv("RANK"); r && launched_by_mpi)
    EMBER_CHECK(env_int("RANK", 0) == cpu->rank(), "dist::init: RANK=", r, " but MPI says this is rank ", cpu->rank());

  const int rank = cpu->rank(), world = cpu->world_size();
  if (o.cuda == "nccl") {
    if (world > 1) select_local_gpu();
    slot() = std::make_unique<Communicator>(cpu, make_nccl_backend(rank, world, cpu.get()));
  } else if (o.cuda == "auto" && world > 1 && nccl_built()) {
    // NCCL (and with it the CUDA runtime) is opened at the first collective on a CUDA tensor, so a
    // CPU-only job never maps it. The GPU must be picked before the first CUDA tensor, though: now
    // when this process already uses CUDA; else the program asks for it (cuda = "nccl", or
    // cuda_available() before init()), or NCCL's start says so.
    if (cuda_loaded()) select_local_gpu();
    Backend* share = cpu.get();
    slot() = std::make_unique<Communicator>(cpu, [=] { return make_nccl_backend(rank, world, share); });
  } else {
    slot() = std::make_unique<Communicator>(cpu);
  }
  return *slot();
}

bool initialized() { return slot() != nullptr; }

Communicator& world() {
  EMBER_CHECK(slot(), "dist::world(): call dist::init() first");
  return *slot();
}

void finalize() {
  if (slot()) slot()->finalize();
}

}  // namespace ember::dist
