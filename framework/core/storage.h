// Storage: one reference-counted buffer that tensors and their views share.
// Memory comes from a caching Allocator per device, which keeps freed blocks for reuse
// (fresh pages cost ~11 us per 4 KiB on these machines) and counts current and peak bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "framework/core/dtype.h"

namespace ember {

struct MemoryStats {
  int64_t current_bytes = 0;  // handed out and not yet freed
  int64_t peak_bytes = 0;     // the most current_bytes has been since the last reset
  int64_t cached_bytes = 0;   // freed blocks kept for reuse
  int64_t allocations = 0;    // calls to allocate
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p, size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  virtual void empty_cache() = 0;  // return cached blocks to the system
};

Allocator& allocator(Device d);  // throws when the device is not built in

// Host memory for at least `bytes` (null where there is none), 64-byte aligned; from 2 MiB on,
// 2 MiB aligned, rounded up to whole 2 MiB pages and offered to Linux for transparent huge pages.
// Release it with free_host. The CPU allocator's blocks and the GEMM's packing buffers come from
// here.
void* allocate_host(size_t bytes);
void free_host(void* p);  // null is a no-op

// Whether [p, p + bytes) lies in one block of allocate_host that Linux was asked to back with huge
// pages, where THP is not off. Within a huge page the physical address bits below 2 MiB are the
// virtual ones, so rows a multiple of 4 KiB apart meet the L2's sets as their addresses say; on
// 4 KiB pages only the bits below 4 KiB are known, the rest are the OS's draw (the GEMM's stripes
// choose their depth by it: ops/matmul/cpu/cache_model.cpp). Memory that Ember did not allocate (a
// NumPy array shared by from_numpy, a DLPack tensor) answers false.
bool on_huge_pages(const void* p, size_t bytes);
MemoryStats memory_stats(Device d = Device::CPU);
void reset_peak_memory(Device d = Device::CPU);

// The CUDA backend installs its allocator here; nothing CUDA is touched until then.
void set_allocator(Device d, Allocator* a);

class Storage {
 public:
  Storage(size_t bytes, Device device);
  // Memory owned elsewhere (a NumPy array, a DLPack capsule): Ember reads and writes it in place and
  // never frees it; `owner` keeps the foreign buffer alive until the last tensor on it is gone.
  Storage(void* data, size_t bytes, Device device, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  // In-place writes after a storage was made (copy_, fill_, set, add_, ..., optimizer steps) stamp
  // it with the global write clock and the writer's name. A recorded node remembers the clock when
  // it was made, so backward can tell that a tensor it saved was overwritten since then and refuse
  // to return a wrong gradient. Kernels writing a fresh output do not stamp: nothing saw it yet.
  uint64_t version() const { return version_; }
  const char* last_writer() const { return last_writer_; }
  void mark_written(const char* by);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  std::shared_ptr<void> owner_;  // set for foreign memory, which the allocator never saw
  uint64_t version_ = 0;         // the write clock at the last in-place write; 0: never written
  const char* last_writer_ = "";
};

// The clock that mark_written advances: every in-place write gets a later value than any node
// recorded before it.
uint64_t write_clock();

}  // namespace ember
