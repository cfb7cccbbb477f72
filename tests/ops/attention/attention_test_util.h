// What the attention tests share: a user's variant counting its calls, the library's flash2 on each
// instruction set as variants, their registration (once per process), and the options and shapes
// the tests run.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "examples/attention/study/study_kernels.h"
#include "ops/attention/attention.h"
#include "ops/attention/cpu/kernels.h"
#include "study_kernels.h"
#include "test_util.h"

namespace attention_test {

using namespace ember;

// A user's variant: the study's Algorithm 1 with blocks of 2 query rows x 3 keys, so that every
// loop has a ragged edge, counting its calls (which shows which backward a recorded call runs).
inline const char* const kTiny = "flash_2x3";
inline std::atomic<int> g_tiny_forwards{0}, g_tiny_backwards{0};

template <class T>
cpu::attn::Problem<T> tiny_problem(const AttentionArgs& a) {
  cpu::attn::Problem<T> p = cpu::attn::Problem<T>::of(a);
  p.br = 2;
  p.bc = 3;
  return p;
}

inline AttentionKernels tiny_kernels() {
  AttentionKernels k;
  k.forward = [](const AttentionArgs& a, void* o, void* lse) {
    ++g_tiny_forwards;
    EMBER_DISPATCH_FLOAT(a.dtype, "flash_2x3", [&] {
      using T = scalar_t;
      attention_study::flash_forward(tiny_problem<T>(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                     static_cast<const T*>(a.v), static_cast<T*>(o), static_cast<T*>(lse));
    });
    return Tensor();
  };
  k.backward = [](const AttentionArgs& a, const AttentionGradArgs& g) {
    ++g_tiny_backwards;
    EMBER_DISPATCH_FLOAT(a.dtype, "flash_2x3 backward", [&] {
      using T = scalar_t;
      attention_study::flash_backward(tiny_problem<T>(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                      static_cast<const T*>(a.v), static_cast<const T*>(g.out),
                                      static_cast<const T*>(g.lse), static_cast<const T*>(g.dout),
                                      static_cast<T*>(g.dq), static_cast<T*>(g.dk), static_cast<T*>(g.dv));
    });
  };
  return k;
}

// The library's flash2 forced onto each instruction set below the best this CPU has ("flash2" is
// the best): its micro-kernel's register block (NR = 64, 16 or 8 floats) sets the kernel's block
// sizes and its row kernels differ, so an AVX-512 machine checks the AVX2 and portable code too.
inline AttentionKernels flash2_on(cpu::CpuIsa isa) {
  AttentionKernels k;
  k.forward = [isa](const AttentionArgs& a, void* o, void* lse) {
    EMBER_DISPATCH_FLOAT(a.dtype, "flash2 on one ISA", [&] {
      using T = scalar_t;
      cpu::attn::flash2_forward(cpu::attn::Problem<T>::of(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                static_cast<const T*>(a.v), static_cast<T*>(o), static_cast<T*>(lse), isa);
    });
    return Tensor();
  };
  k.backward = [isa](const AttentionArgs& a, const AttentionGradArgs& g) {
    EMBER_DISPATCH_FLOAT(a.dtype, "flash2 on one ISA, backward", [&] {
      using T = scalar_t;
      cpu::attn::flash2_backward(cpu::attn::Problem<T>::of(a), static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                 static_cast<const T*>(a.v), static_cast<const T*>(g.out),
                                 static_cast<const T*>(g.lse), static_cast<const T*>(g.dout), static_cast<T*>(g.dq),
                                 static_cast<T*>(g.dk), static_cast<T*>(g.dv), isa);
    });
  };
  return k;
}

inline std::vector<std::string> flash2_isa_names() {
  std::vector<std::string> n;
  for (int i = 0; i < int(cpu::best_cpu_isa()); ++i) n.push_back(str("flash2_", cpu::name(cpu::CpuIsa(i))));
  return n;
}

inline void register_variants() {
  ember::testing::register_study_kernels();
  static std::once_flag once;
  std::call_once(once, [] {
    register_attention_variant(kTiny, tiny_kernels());
    for (int i = 0; i < int(cpu::best_cpu_isa()); ++i)
      register_attention_variant(flash2_isa_names()[size_t(i)], flash2_on(cpu::CpuIsa(i)));
  });
}

// Every CPU variant registered: the library's flash2, the study's standard and flash, kTiny, and
// flash2 on each lesser instruction set.
inline std::vector<std::string> impls() {
  register_variants();
  return attention_variants(Device::CPU);
}

inline AttentionOptions opts(const std::string& impl, bool causal, int64_t block_m = 0) {
  register_variants();
  AttentionOptions o;
  o.impl = impl;
  o.causal = causal;
  o.block_m = block_m;
  return o;
}

struct Case {
  Shape q, kv;
  int64_t block_m;  // small budgets make blocks that do not divide N
};

// Shapes: (N, d), (B, N, d), (B, H, N, d); N of 1, 7, 33, 127; Nq != Nk; M giving Bc of 1..many.
inline std::vector<Case> cases() {
  return {{{1, 1}, {1, 1}, 4},          {{7, 5}, {7, 5}, 40},           {{2, 7, 5}, {2, 7, 5}, 0},
          {{2, 3, 33, 8}, {2, 3, 33, 8}, 96}, {{1, 2, 127, 16}, {1, 2, 127, 16}, 640}, {{2, 5, 3}, {2, 9, 3}, 36},
          {{1, 1, 33, 4}, {1, 1, 70, 4}, 16}};
}

}  // namespace attention_test
