// dist's side of the NCCL backend: loads libember_nccl.so (framework/train/dist/nccl/) on first need.
#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "framework/train/dist/backend.h"
#include "framework/train/dist/nccl_hooks.h"
#include "framework/core/shared_library.h"

namespace ember::dist {

namespace nccl_hooks {
BackendHook<std::shared_ptr<Backend>(int, int, const ShareBytes&)> make_backend("dist nccl backend");
BackendHook<void()> select_local_gpu("dist select_local_gpu");
}  // namespace nccl_hooks

namespace {
constexpr const char* kFile = "libember_nccl.so";
constexpr const char* kPathVariable = "EMBER_NCCL_BACKEND";

std::atomic<bool>& asked_to_load() {
  static std::atomic<bool> asked{false};
  return asked;
}

const LoadedLibrary& nccl_library() {
  asked_to_load() = true;
  return load_sibling_library(kFile, kPathVariable);
}

// Where load_sibling_library will look, found without opening anything: opening the library maps
// NCCL and the CUDA runtime, which a CPU-only job must not pay for.
std::string nccl_library_path() {
  if (const char* e = std::getenv(kPathVariable); e && *e) return e;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&load_sibling_library), &info) || !info.dli_fname) return kFile;
  const std::string core = info.dli_fname;
  const size_t slash = core.rfind('/');
  return (slash == std::string::npos ? std::string(".") : core.substr(0, slash)) + "/" + kFile;
}
}  // namespace

bool nccl_built() {
  struct stat st{};
  return ::stat(nccl_library_path().c_str(), &st) == 0;
}

bool nccl_loaded() { return asked_to_load(); }

bool cuda_loaded() {
  // RTLD_NOLOAD: a handle only if the library is mapped already (matched by its soname).
  void* h = dlopen("libember_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

void select_local_gpu() {
  if (nccl_built() && nccl_library().ok) nccl_hooks::select_local_gpu();
}

ShareBytes share_by_broadcast(Backend& b) {
  return [&b](void* bytes, size_t n) {
    // int64 elements: every backend moves them; the id is padded to whole elements.
    Tensor t = zeros({int64_t((n + 7) / 8)}, DType::Int64);
    if (b.rank() == 0) std::memcpy(t.raw_data(), bytes, n);
    b.broadcast(t, 0);
    std::memcpy(bytes, t.raw_data(), n);
  };
}

std::shared_ptr<Backend> make_nccl_backend(int rank, int world, ShareBytes share_id) {
  const LoadedLibrary& lib = nccl_library();
  if (!lib.found)
    throw Error("dist: the NCCL backend was asked for, but this Ember was built without NCCL (expected a build with "
                "CUDA, EMBER_NCCL=ON or AUTO, where nccl.h and libnccl are installed)");
  EMBER_CHECK(lib.ok, "dist: the NCCL backend ", lib.path, " could not be loaded: ", lib.error);
  EMBER_CHECK(world == 1 || share_id, "dist: the NCCL backend for ", world,
              " ranks needs a way to hand out NCCL's id (MPI, or a rendezvous file)");
  return nccl_hooks::make_backend(rank, world, share_id);
}

std::shared_ptr<Backend> make_nccl_backend(int rank, int world, Backend* share_id) {
  return make_nccl_backend(rank, world, share_id ? share_by_broadcast(*share_id) : ShareBytes());
}

}  // namespace ember::dist
