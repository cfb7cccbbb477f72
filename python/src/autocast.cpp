// Autocast from Python: the thread's state, read and set by ember.autocast (ember/_autocast.py),
// which saves it on entry and restores it on exit, and the two op lists.
#include "bindings.h"

namespace ember::py {

void bind_autocast(nb::module_& m) {
  m.def("_autocast_state", [] {
    const autocast::State s = autocast::state();
    return std::make_pair(s.enabled, s.dtype);
  });
  m.def("_set_autocast_state", [](bool enabled, DType dtype) { autocast::set_state({enabled, dtype}); },
        nb::arg("enabled"), nb::arg("dtype"));
  m.def("autocast_lower_precision_ops", &autocast::lower_precision_ops,
        "the ops that run in the autocast dtype inside ember.autocast");
  m.def("autocast_float32_ops", &autocast::float32_ops, "the ops that run in float32 inside ember.autocast");
}

}  // namespace ember::py
