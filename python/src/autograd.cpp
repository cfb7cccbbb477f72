// Autodiff from Python: make_vjp and make_jvp over Python functions, the VJP object, no_grad.
// grad, value_and_grad and the single-input conveniences are Python (ember/autograd.py) on these.
#include "bindings.h"
#include "framework/train/functional/checkpoint.h"
#include "examples/autodiff/evaluation_trace.h"

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

  // The function is called again in backward, maybe on another thread's stack and without the
  // GIL (backward releases it): a PyCallable takes the GIL for the call and for its last release.
  m.def("_checkpoint", [](nb::handle f, const std::vector<Tensor>& xs) {
    PyCallable fn(f);
    return checkpoint([fn](const std::vector<Tensor>& in) {
      nb::gil_scoped_acquire gil;
      return as_tensor(fn(nb::cast(in)), "checkpoint: the function's result");
    }, xs);
  }, nb::arg("f"), nb::arg("xs"));

  nb::class_<NoGrad>(m, "_NoGrad")
      .def(nb::init<>())
      .def("__enter__", [](NoGrad& g) { g.guard = std::make_unique<autograd::NoGradGuard>(); })
      .def("__exit__", [](NoGrad& g, nb::args) { g.guard.reset(); });
  m.def("grad_enabled", &autograd::grad_enabled);

  // Baydin et al.'s evaluation traces of a Python function (the autodiff study's tables).
  using study::EvaluationTrace;
  using study::TraceFormat;
  auto format_of = [](const std::string& f) {
    EMBER_CHECK(f == "text" || f == "latex", "autodiff_trace: format must be 'text' or 'latex', got '", f, "'");
    return f == "text" ? TraceFormat::Text : TraceFormat::Latex;
  };
  nb::class_<EvaluationTrace>(m, "EvaluationTrace")
      .def_ro("y", &EvaluationTrace::y)
      .def_ro("y_tangent", &EvaluationTrace::y_tangent)
      .def_ro("gradient", &EvaluationTrace::gradient)
      .def_ro("direction", &EvaluationTrace::direction)
      .def_prop_ro("vars", [](const EvaluationTrace& t) {
        nb::list out;
        for (const auto& v : t.vars) {
          nb::dict d;
          d["index"] = v.index;
          d["op"] = v.op;
          d["args"] = v.args;
          d["value"] = v.value;
          d["tangent"] = v.tangent;
          d["adjoint"] = v.adjoint;
          out.append(d);
        }
        return out;
      })
      .def("primal_table", [format_of](const EvaluationTrace& t, const std::string& f) {
        return study::primal_table(t, format_of(f));
      }, nb::arg("format") = "text")
      .def("tangent_table", [format_of](const EvaluationTrace& t, const std::string& f) {
        return study::tangent_table(t, format_of(f));
      }, nb::arg("format") = "text")
      .def("adjoint_table", [format_of](const EvaluationTrace& t, const std::string& f) {
        return study::adjoint_table(t, format_of(f));
      }, nb::arg("format") = "text");
  m.def("_autodiff_trace", [](nb::handle f, const std::vector<double>& x, const std::vector<double>& direction) {
    auto fn = [f](const std::vector<Tensor>& xs) {
      return as_tensor(nb::borrow(f)(nb::cast(xs)), "autodiff_trace: f's result");
    };
    return study::trace_evaluation(fn, x, direction);
  }, nb::arg("f"), nb::arg("x"), nb::arg("direction"));
}

}  // namespace ember::py
