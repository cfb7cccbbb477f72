// The studies' own kernels (examples/<study>/study/), which the library does not ship: the
// extension links the CPU ones, and ember.register_study_kernels() adds them to the ops as named
// variants, as a C++ program that compares them does. Until then only the library's kernels are
// there. The CUDA matmul study is a library of its own (libember_matmul_cuda_study.so, beside the
// core where Ember was built with CUDA), opened here only when asked for, so that `import ember`
// maps no CUDA library.
#include <optional>

#include "bindings.h"
#include "examples/attention/study/study_kernels.h"
#include "examples/matmul/study/study_kernels.h"
#include "framework/core/cuda.h"
#include "framework/core/shared_library.h"

namespace ember::py {
namespace {

void register_cuda_study_kernels() {
  const LoadedLibrary& lib = load_sibling_library("libember_matmul_cuda_study.so", "EMBER_MATMUL_CUDA_STUDY_LIB");
  EMBER_CHECK(lib.found, "register_study_kernels(cuda=True): the CUDA matmul study is not installed (", lib.error,
              "); it is built with the CUDA backend: pip install . -C cmake.define.EMBER_CUDA=AUTO where nvcc exists");
  EMBER_CHECK(lib.ok, "register_study_kernels(cuda=True): ", lib.path, " could not be loaded: ", lib.error);
  auto* entry = reinterpret_cast<void (*)()>(library_symbol(lib, "ember_matmul_cuda_study_register"));
  EMBER_CHECK(entry, "register_study_kernels(cuda=True): ", lib.path,
              " has no ember_matmul_cuda_study_register (a library from another build of Ember?)");
  entry();
}

}  // namespace

void bind_study(nb::module_& m) {
  m.def("register_study_kernels", [](std::optional<bool> cuda) {
    matmul_study::register_matmul_study_kernels();
    attention_study::register_attention_study_kernels();
    // Asked only when the caller did not say: cuda_available() opens the CUDA backend where it exists.
    if (cuda.has_value() ? *cuda : cuda_available()) register_cuda_study_kernels();
  }, nb::arg("cuda") = nb::none(),
     "Adds the studies' kernels to the ops as named variants: on the CPU, matmul's \"naive\", \"ikj\" and "
     "\"blocked\" (ember.matmul(a, b, impl=...)) and attention's \"standard\" and \"flash\", the paper's "
     "Algorithms 0 and 1 (ember.attention(..., impl=...), GPT2.attention); on CUDA tensors, matmul's "
     "\"naive\", \"tiled\" (ember.matmul(..., tile=4, 8, 16 or 32)), \"register_tiled\" and \"register_tiled_db\". "
     "cuda: None adds the CUDA ones when a GPU is usable (ember.cuda.is_available()), True always (an "
     "ember.Error where this Ember was built without CUDA; registering needs no GPU), False never. Once per "
     "process; later calls do nothing.");
}

}  // namespace ember::py
