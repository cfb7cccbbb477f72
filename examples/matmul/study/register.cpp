// The study's kernels join matmul by an explicit call, not a static initialiser: a static library
// drops an object file that nothing references, and with it any initialiser in it.
#include <mutex>

#include "examples/matmul/study/study_kernels.h"

namespace ember::matmul_study {

void register_matmul_study_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_matmul_variant("naive", gemm_naive);
    register_matmul_variant("ikj", gemm_ikj);
    register_blocked_matmul("blocked", BlockSizes{});
  });
}

}  // namespace ember::matmul_study
