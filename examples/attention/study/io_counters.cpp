#include "examples/attention/study/io_counters.h"

namespace ember::attention_study {

namespace detail {
std::atomic<bool> g_attention_io_on{false};
std::atomic<int64_t> g_attention_io_read{0}, g_attention_io_write{0};
}  // namespace detail

void set_attention_io_counting(bool on) { detail::g_attention_io_on.store(on); }
bool attention_io_counting() { return detail::g_attention_io_on.load(); }
void reset_attention_io() {
  detail::g_attention_io_read.store(0);
  detail::g_attention_io_write.store(0);
}
AttentionIo attention_io() { return {detail::g_attention_io_read.load(), detail::g_attention_io_write.load()}; }

}  // namespace ember::attention_study
