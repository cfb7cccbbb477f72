// What libember_nccl.so (framework/train/dist/nccl/) provides to dist (framework/core/backend_hook.h):
// filled when it is loaded.
#pragma once
#include <memory>

#include "framework/core/backend_hook.h"
#include "framework/train/dist/backend.h"

namespace ember::dist::nccl_hooks {

extern BackendHook<std::shared_ptr<Backend>(int rank, int world, const ShareBytes& share_id)> make_backend;
extern BackendHook<void()> select_local_gpu;

}  // namespace ember::dist::nccl_hooks
