// The extension module ember._ember; ember/__init__.py builds the Python API on it.
#include "bindings.h"

NB_MODULE(_ember, m) {
  m.doc() = "Ember's C++ core (the ember package wraps it)";
  // A custom op defined in Python stays in the process-wide op table (as C++ ones do), holding its
  // Python rules and through them tensors and types until exit; nanobind would report those as
  // leaks at interpreter shutdown. They are released deliberately never, not lost.
  nb::set_leak_warnings(false);
  // ember::Error becomes ember.Error, a RuntimeError, its message in Python's spelling (errors.cpp).
  ember::py::bind_errors(m);
  // One class object, filled by bind_tensor (metadata, views, operators) and bind_ops (methods).
  nb::class_<ember::Tensor> cls(m, "Tensor");
  ember::py::bind_tensor(m, cls);
  ember::py::bind_ops(m, cls);
  ember::py::bind_autograd(m);
  ember::py::bind_autocast(m);
  ember::py::bind_custom_op(m);
  ember::py::bind_nn_optim(m);
  ember::py::bind_io(m);
  ember::py::bind_gpt2(m);
  ember::py::bind_cuda(m);
  ember::py::bind_study(m);
}
