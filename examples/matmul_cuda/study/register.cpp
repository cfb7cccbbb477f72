// The study's kernels join matmul by an explicit call, not a static initialiser: a static library
// drops an object file that nothing references, and with it any initialiser in it.
#include <mutex>

#include "examples/matmul_cuda/study/study_kernels.h"

namespace ember::matmul_cuda_study {

void register_matmul_cuda_study_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_matmul_cuda_variant(
        "naive", {[](const cuda::GemmView<float>& g, int64_t batch, const MatmulOptions&) { launch_naive(g, batch); },
                  [](const cuda::GemmView<double>& g, int64_t batch, const MatmulOptions&) { launch_naive(g, batch); }});
    register_matmul_cuda_variant(
        "tiled",
        {[](const cuda::GemmView<float>& g, int64_t batch, const MatmulOptions& o) { launch_tiled(g, batch, o.tile); },
         [](const cuda::GemmView<double>& g, int64_t batch, const MatmulOptions& o) { launch_tiled(g, batch, o.tile); }});
    register_matmul_cuda_variant(
        "register_tiled",
        {[](const cuda::GemmView<float>& g, int64_t batch, const MatmulOptions&) { launch_register_tiled(g, batch, false); },
         nullptr});
    register_matmul_cuda_variant(
        "register_tiled_db",
        {[](const cuda::GemmView<float>& g, int64_t batch, const MatmulOptions&) { launch_register_tiled(g, batch, true); },
         nullptr});
  });
}

}  // namespace ember::matmul_cuda_study

extern "C" void ember_matmul_cuda_study_register() { ember::matmul_cuda_study::register_matmul_cuda_study_kernels(); }
