// The extension module ember._ember; ember/__init__.py builds the Python API on it.
#include "bindings.h"

NB_MODULE(_ember, m) {
  m.doc() = "Ember's C++ core (the ember package wraps it)";
  // ember::Error keeps its message and becomes ember.Error, a RuntimeError.
  nb::exception<ember::Error>(m, "Error", PyExc_RuntimeError);
  // One class object, filled by bind_tensor (metadata, views, operators) and bind_ops (methods).
  nb::class_<ember::Tensor> cls(m, "Tensor");
  ember::py::bind_tensor(m, cls);
  ember::py::bind_ops(m, cls);
  ember::py::bind_autograd(m);
  ember::py::bind_custom_op(m);
  ember::py::bind_nn_optim(m);
  ember::py::bind_io(m);
}
