#include "framework/train/dist/backend.h"

#include <cstdio>
#include <cstdlib>

namespace ember::dist {

std::string Backend::unserved(Device d) const {
  return str("backend '", name(), "' does not serve ", d, " tensors");
}

void Backend::abort(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace ember::dist
