// dist::init(): the process's communicator from the launcher's environment.
#include <cstdlib>
#include <memory>

#include "framework/dist/communicator.h"

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
  } else {
    EMBER_CHECK(wanted == 1, "dist::init: WORLD_SIZE=", wanted, " asks for several ranks, but this process was not "
                "started by mpirun (expected: mpirun -np ", wanted, " <program>; Ember's NCCL backend also takes its "
                "ranks from MPI)");
    cpu = make_local_backend();
  }
  if (const char* r = std::getenv("RANK"); r && launched_by_mpi)
    EMBER_CHECK(env_int("RANK", 0) == cpu->rank(), "dist::init: RANK=", r, " but MPI says this is rank ", cpu->rank());

  if (o.cuda != "none" && cpu->world_size() > 1) select_local_gpu();
  if (o.cuda == "nccl") {
    slot() = std::make_unique<Communicator>(cpu, make_nccl_backend(cpu->rank(), cpu->world_size(), cpu.get()));
  } else if (o.cuda == "auto" && nccl_built() && cpu->world_size() > 1) {
    Backend* share = cpu.get();
    const int rank = cpu->rank(), world = cpu->world_size();
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
