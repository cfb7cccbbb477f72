#include "framework/core/backend_hook.h"

#include "framework/core/error.h"

namespace ember::hook_detail {

void missing(const char* name) {
  throw Error(str("'", name, "' is provided by a backend library that is not loaded (for CUDA: libember_cuda.so, ",
                  "loaded on the first CUDA tensor)"));
}

}  // namespace ember::hook_detail
