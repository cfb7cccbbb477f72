// Shared pieces of the Python extension ember._ember: one bind_* function per concept (tensor,
// ops, autograd, custom ops, nn/optim, io), and the helpers that keep Python objects safe inside
// C++ closures.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <vector>

#include "ember.h"

namespace nb = nanobind;

namespace ember::py {

// The Tensor class is made first (its methods come from both bind_tensor and bind_ops).
void bind_tensor(nb::module_& m, nb::class_<Tensor>& cls);
void bind_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_autograd(nb::module_& m);
void bind_autocast(nb::module_& m);
void bind_custom_op(nb::module_& m);
void bind_nn_optim(nb::module_& m);
void bind_io(nb::module_& m);
void bind_gpt2(nb::module_& m);
void bind_cuda(nb::module_& m);
void bind_study(nb::module_& m);
void bind_errors(nb::module_& m);  // ember.Error first: the other bind_* functions may raise it
// The message of an ember::Error as Python spells it (".to(ember.float32)", "ember.no_grad()").
std::string pythonic_message(std::string s);

// Ops run their kernels without the GIL, so that other Python threads run meanwhile; a Python
// callback (a custom op's rule, a traced Python function) takes it back through PyCallable.
using release_gil = nb::call_guard<nb::gil_scoped_release>;

// False once the interpreter is finalizing: Python references must then be leaked, not released.
bool python_alive();

// A Python callable held by C++ closures (an op definition, a recorded node). Those closures may be
// copied or destroyed without the GIL (inside a kernel) or after the interpreter is gone (the op
// table is a static), so the reference is counted under the GIL and leaked at exit.
class PyCallable {
 public:
  PyCallable() = default;
  explicit PyCallable(nb::handle fn);
  bool defined() const { return ref_ != nullptr; }
  // Calls fn(*args) holding the GIL; a Python exception propagates as nb::python_error.
  template <class... Args>
  nb::object operator()(Args&&... args) const {
    nb::gil_scoped_acquire gil;
    return nb::borrow(ref_->obj)(std::forward<Args>(args)...);
  }

 private:
  struct Ref {
    PyObject* obj;
    ~Ref();
  };
  std::shared_ptr<Ref> ref_;
};

// A Python result that must be one tensor: an ember.Tensor, or a NumPy array (copied in).
Tensor as_tensor(nb::handle h, const char* what);
// Python's tuple of tensors (or one tensor) as a vector.
std::vector<Tensor> as_tensors(nb::handle h, const char* what);
// The zero-copy NumPy view of a CPU tensor's data (the tensor's storage stays alive with it).
nb::object to_ndarray(const Tensor& t);

}  // namespace ember::py
