#include "framework/core/shared_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace ember {
namespace {

std::string folder_of_this_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&folder_of_this_library), &info) || !info.dli_fname) return "";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

bool exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

LoadedLibrary open(const std::string& file, const char* env) {
  LoadedLibrary r;
  const char* override_path = env ? std::getenv(env) : nullptr;
  r.path = override_path && *override_path ? override_path : folder_of_this_library() + "/" + file;
  r.found = exists(r.path);
  if (!r.found) {
    r.error = "no " + r.path;
    return r;
  }
  // RTLD_NOW: a missing dependency (no libcudart on this machine) shows here, as one clear error,
  // rather than as a crash at the first call.
  r.handle = dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!r.handle) {
    const char* e = dlerror();
    r.error = e ? e : "dlopen failed";
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

void* library_symbol(const LoadedLibrary& lib, const char* name) {
  return lib.ok && lib.handle ? dlsym(lib.handle, name) : nullptr;
}

const LoadedLibrary& load_sibling_library(const std::string& file, const char* env) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, std::unique_ptr<LoadedLibrary>>();  // never destroyed
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*loaded)[file];
  if (!slot) slot = std::make_unique<LoadedLibrary>(open(file, env));
  return *slot;
}

}  // namespace ember
