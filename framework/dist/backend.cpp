#include "framework/dist/backend.h"

#include <cstdio>
#include <cstdlib>

namespace ember::dist {

void Backend::abort(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace ember::dist
