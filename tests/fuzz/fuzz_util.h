// Shared by the libFuzzer harnesses: every reader of outside bytes may refuse its input with
// ember::Error, and with nothing else. Any other exception escapes LLVMFuzzerTestOneInput and
// aborts, which libFuzzer reports as a finding, as it does crashes and sanitizer reports.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace ember::fuzz {

// Runs f; ember::Error is an accepted outcome (the input was refused with a message).
template <class F>
void refused_ok(F&& f) {
  try {
    f();
  } catch (const ember::Error&) {
  }
}

// A per-process scratch file for readers that take a path.
inline const std::string& scratch_path(const char* suffix) {
  static const std::string p = "/tmp/ember_fuzz_" + std::to_string(::getpid()) + suffix;
  return p;
}

inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
}

}  // namespace ember::fuzz
