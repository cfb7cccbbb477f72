// dist's side of the NCCL backend: loads libember_nccl.so (framework/dist/nccl/) on first need.
#include "framework/dist/backend.h"
#include "framework/dist/nccl_hooks.h"
#include "framework/shared_library.h"

namespace ember::dist {

namespace nccl_hooks {
BackendHook<std::shared_ptr<Backend>(int, int, Backend*)> make_backend("dist nccl backend");
BackendHook<void()> select_local_gpu("dist select_local_gpu");
}  // namespace nccl_hooks

namespace {
const LoadedLibrary& nccl_library() { return load_sibling_library("libember_nccl.so", "EMBER_NCCL_BACKEND"); }
}  // namespace

bool nccl_built() { return nccl_library().found; }

void select_local_gpu() {
  if (nccl_library().ok) nccl_hooks::select_local_gpu();
}

std::shared_ptr<Backend> make_nccl_backend(int rank, int world, Backend* share_id) {
  const LoadedLibrary& lib = nccl_library();
  if (!lib.found)
    throw Error("dist: the NCCL backend was asked for, but this Ember was built without NCCL (expected a build with "
                "CUDA, EMBER_NCCL=ON or AUTO, where nccl.h and libnccl are installed)");
  EMBER_CHECK(lib.ok, "dist: the NCCL backend ", lib.path, " could not be loaded: ", lib.error);
  return nccl_hooks::make_backend(rank, world, share_id);
}

}  // namespace ember::dist
