// Autodiff from Python: make_vjp and make_jvp over Python functions, the VJP object, no_grad.
// grad, value_and_grad and the single-input conveniences are Python (ember/autograd.py) on these.
#include "bindings.h"

namespace ember::py {
namespace {

// A Python function of tensors as the C++ FnNM. make_vjp/make_jvp call it once, before they
// return, on this thread and with the GIL held (the bindings below keep it), so a plain handle is
// enough here; the Python side passes f(*xs) -> tuple of tensors.
FnNM as_fn(nb::handle f) {
  return [f](const std::vector<Tensor>& xs) {
    nb::object r = nb::borrow(f)(nb::cast(xs));
    return as_tensors(r, "make_vjp: the function's result");
  };
}

struct NoGrad {
  std::unique_ptr<autograd::NoGradGuard> guard;
};

}  // namespace

void bind_autograd(nb::module_& m) {
  nb::class_<VjpFunction>(m, "VjpFunction")
      .def("__call__", &VjpFunction::operator(), nb::arg("cotangents"), release_gil(),
           "one cotangent per output; returns one cotangent per input");

  m.def("_make_vjp", [](nb::handle f, const std::vector<Tensor>& xs) { return make_vjp(as_fn(f), xs); },
        nb::arg("f"), nb::arg("xs"));
  m.def("_make_jvp", [](nb::handle f, const std::vector<Tensor>& xs, const std::vector<Tensor>& vs) {
    return make_jvp(as_fn(f), xs, vs);
  }, nb::arg("f"), nb::arg("xs"), nb::arg("vs"));

  nb::class_<NoGrad>(m, "_NoGrad")
      .def(nb::init<>())
      .def("__enter__", [](NoGrad& g) { g.guard = std::make_unique<autograd::NoGradGuard>(); })
      .def("__exit__", [](NoGrad& g, nb::args) { g.guard.reset(); });
  m.def("grad_enabled", &autograd::grad_enabled);
}

}  // namespace ember::py
