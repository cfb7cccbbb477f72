// Whether the CPU converts float16 in hardware (F16C). Asked through CPUID rather than
// __builtin_cpu_supports because clang 14 does not know the "f16c" feature name, and the fuzzers
// and sanitizer builds compile with clang.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ember::cpu {

inline bool cpu_has_f16c() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    return (ecx & bit_F16C) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace ember::cpu
