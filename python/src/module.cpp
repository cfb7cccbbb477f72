// The extension module ember._ember; ember/__init__.py builds the Python API on it.
#include "bindings.h"

NB_MODULE(_ember, m) {
  m.doc() = "Ember's C++ core (the ember package wraps it)";
  // A custom op defined in Python stays in the process-wide op table (as C++ ones do), holding its
  // Python rules and through them tensors and types until exit; nanobind would report those as
  // leaks at interpreter shutdown. They are released deliberately never, not lost.
  nb::set_leak_warnings(false);
  // ember::Error keeps its message and becomes ember.Error, a RuntimeError. The message is decoded
  // with errors='replace': one that quotes bytes of a hostile file may hold invalid UTF-8, which a
  // strict decode would turn into an empty message. The type object lives as long as the process.
  auto* error_type = new nb::exception<ember::Error>(m, "Error", PyExc_RuntimeError);
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const ember::Error& e) {
          const std::string what = e.what();
          PyObject* msg = PyUnicode_DecodeUTF8(what.data(), Py_ssize_t(what.size()), "replace");
          PyErr_SetObject(static_cast<PyObject*>(type), msg);
          Py_XDECREF(msg);
        }
      },
      error_type->ptr());
  // One class object, filled by bind_tensor (metadata, views, operators) and bind_ops (methods).
  nb::class_<ember::Tensor> cls(m, "Tensor");
  ember::py::bind_tensor(m, cls);
  ember::py::bind_ops(m, cls);
  ember::py::bind_autograd(m);
  ember::py::bind_custom_op(m);
  ember::py::bind_nn_optim(m);
  ember::py::bind_io(m);
  ember::py::bind_gpt2(m);
  ember::py::bind_cuda(m);
  ember::py::bind_study(m);
}
