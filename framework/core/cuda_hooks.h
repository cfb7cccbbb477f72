// What the CUDA backend provides to the core (framework/core/cuda.h is their public face): device
// queries, installing the allocator and copier, cuRAND, events and streams. libember_cuda.so
// fills these when it is loaded (framework/cuda/device.cpp, allocator.cpp, random.cpp); the core
// loads it on first need (loader.cpp) and never links a CUDA library itself.
#pragma once
#include <cstdint>
#include <string>

#include "framework/core/backend_hook.h"
#include "framework/core/tensor.h"

namespace ember::cuda::runtime {

extern BackendHook<std::string()> probe;  // "" when a GPU is usable, else why not (never throws)
extern BackendHook<void()> install;       // the caching allocator and the host<->device copier
extern BackendHook<std::string()> device_name;
extern BackendHook<int64_t()> l2_cache_bytes;
extern BackendHook<void()> synchronize;
extern BackendHook<void(const Tensor& dst, double value)> fill;  // Tensor::fill_ on the device
extern BackendHook<Tensor(const Shape&, DType, uint64_t)> rand;
extern BackendHook<Tensor(const Shape&, double, double, DType, uint64_t)> normal;
extern BackendHook<void*()> event_create;
extern BackendHook<void(void*)> event_destroy;
extern BackendHook<void(void* event, void* stream)> event_record;
extern BackendHook<void(void*)> event_synchronize;
extern BackendHook<float(void* since, void* until)> event_elapsed_ms;
extern BackendHook<void*()> stream_create;
extern BackendHook<void(void*)> stream_destroy;
extern BackendHook<void(void*)> stream_synchronize;
extern BackendHook<void(void* stream, void* event)> stream_wait;

}  // namespace ember::cuda::runtime
