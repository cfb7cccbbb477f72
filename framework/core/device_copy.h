// Byte copies between devices. The CUDA backend installs its copier at start-up of a CUDA
// program (never at static-initialisation time, so CPU-only programs touch nothing CUDA).
#pragma once
#include <cstddef>

#include "framework/core/dtype.h"

namespace ember {

using DeviceCopyFn = void (*)(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);
void set_device_copy(DeviceCopyFn fn);
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

}  // namespace ember
