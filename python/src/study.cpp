// The studies' own kernels (examples/<study>/study/), which the library does not ship: the
// extension links them, and ember.register_study_kernels() adds them to the ops as named variants,
// as a C++ program that compares them does. Until then only the library's kernels are there.
#include "bindings.h"
#include "examples/attention/study/study_kernels.h"
#include "examples/matmul/study/study_kernels.h"

namespace ember::py {

void bind_study(nb::module_& m) {
  m.def("register_study_kernels", [] {
    matmul_study::register_matmul_study_kernels();
    attention_study::register_attention_study_kernels();
  }, "Adds the studies' CPU kernels to the ops as named variants: matmul's \"naive\", \"ikj\" and \"blocked\" "
     "(ember.matmul(a, b, impl=...)) and attention's \"standard\" and \"flash\", the paper's Algorithms 0 and 1 "
     "(ember.attention(..., impl=...), GPT2.attention). Once per process; later calls do nothing.");
}

}  // namespace ember::py
