// Opening a library of Ember's beside the one that holds the core, for backends that are loaded
// only when a program asks for them (libember_cuda.so on the first CUDA tensor,
// libember_nccl.so on the first NCCL communicator).
#pragma once
#include <string>

namespace ember {

struct LoadedLibrary {
  bool ok = false;
  bool found = false;     // the file exists (false: this Ember was built without it)
  std::string path;       // where it was looked for
  std::string error;      // why it could not be opened ("" when ok)
  void* handle = nullptr;  // dlopen's handle when ok
};

// Opens `file` (e.g. "libember_cuda.so") once per process: from the path in the environment
// variable `env` if that is set, else from the folder that holds libember_core.so. Later calls
// return the first answer. Thread-safe.
const LoadedLibrary& load_sibling_library(const std::string& file, const char* env);

// The address of the C symbol `name` in an opened library, or nullptr (the library is not open, or
// does not define it). For libraries whose entry point a caller looks up by name, such as a study's
// kernel registration (extern "C" void ember_..._register()).
void* library_symbol(const LoadedLibrary& lib, const char* name);

}  // namespace ember
