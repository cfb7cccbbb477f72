// The packed GEMM's per-thread scratch buffers (packed_internal.h, scratch()).
#include <memory>

#include "framework/core/storage.h"
#include "ops/matmul/cpu/packed_internal.h"

namespace ember::cpu::packed_gemm {

namespace {
struct FreeDeleter {
  void operator()(void* p) const { free_host(p); }
};
}  // namespace

// Two slots per thread and dtype, grown to the largest request and never shrunk. They hold at most
// kc x nc + threads x kc x mc elements per dtype: for float32 about 9 MiB on a 1 MiB L2, 18 MiB on a
// 2 MiB one (twice the kc: general_blocks).
template <class T>
T* scratch(int slot, size_t count) {
  thread_local std::unique_ptr<void, FreeDeleter> buf[2];
  thread_local size_t cap[2] = {0, 0};
  if (cap[slot] < count) {
    size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    void* p = allocate_host(bytes);  // on huge pages from 2 MiB on (framework/core/storage.h)
    EMBER_CHECK(p != nullptr, "matmul: cannot allocate ", bytes, " bytes for packing");
    buf[slot].reset(p);
    cap[slot] = bytes / sizeof(T);
  }
  return static_cast<T*>(buf[slot].get());
}

template float* scratch<float>(int, size_t);
template double* scratch<double>(int, size_t);

}  // namespace ember::cpu::packed_gemm
