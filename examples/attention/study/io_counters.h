// Instrumentation for the attention study: the bytes each of its CPU kernels (standard.cpp,
// flash.cpp) moves between "main memory" (the Q, K, V, O, S, P, dO, ... arrays) and its on-chip
// working set (the blocks it holds while it computes). Kernels add whole tiles at a time, and only
// while counting is switched on, so the cost when off is one relaxed atomic load per tile. The
// library's FlashAttention-2 is not instrumented: it counts nothing.
#pragma once
#include <atomic>
#include <cstdint>

namespace ember::attention_study {

struct AttentionIo {
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;
};

void set_attention_io_counting(bool on);
bool attention_io_counting();
void reset_attention_io();
AttentionIo attention_io();

namespace detail {
extern std::atomic<bool> g_attention_io_on;
extern std::atomic<int64_t> g_attention_io_read, g_attention_io_write;
// elements * bytes per element
inline void count_read(int64_t elems, int64_t elem_bytes) {
  if (g_attention_io_on.load(std::memory_order_relaxed))
    g_attention_io_read.fetch_add(elems * elem_bytes, std::memory_order_relaxed);
}
inline void count_write(int64_t elems, int64_t elem_bytes) {
  if (g_attention_io_on.load(std::memory_order_relaxed))
    g_attention_io_write.fetch_add(elems * elem_bytes, std::memory_order_relaxed);
}
}  // namespace detail

}  // namespace ember::attention_study
