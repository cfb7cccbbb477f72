// Custom ops with Python rules (framework/core/custom_op.h) and gradcheck (framework/core/gradcheck.h).
// The rules run under the GIL, taken back from the kernel or backward pass that released it.
#include "bindings.h"

namespace ember::py {
namespace {

nb::object or_none(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

nb::list tensor_list(const std::vector<Tensor>& ts) {
  nb::list l;
  for (const Tensor& t : ts) l.append(or_none(t));
  return l;
}

// The Python side (ember.CustomOp) passes rules that take lists; it unpacks them for the user.
CustomOp make_custom_op(const std::string& name, nb::handle forward, nb::handle vjp, nb::handle vjp_all,
                        nb::handle jvp) {
  EMBER_CHECK(!forward.is_none(), "CustomOp '", name, "': a forward function is required");
  EMBER_CHECK(vjp.is_none() || vjp_all.is_none(), "CustomOp '", name, "': give vjp or vjp_all, not both");
  CustomOp op(name);
  PyCallable f(forward);
  op.cpu([f, name](const std::vector<Tensor>& in) {
    nb::gil_scoped_acquire gil;
    return as_tensor(f(tensor_list(in)), ("custom op '" + name + "': forward result").c_str());
  });
  if (!vjp.is_none()) {
    PyCallable r(vjp);
    op.vjp([r, name](const Tensor& g, int i, const std::vector<Tensor>& in, const Tensor& out) {
      nb::gil_scoped_acquire gil;
      return as_tensor(r(g, i, tensor_list(in), out), ("custom op '" + name + "': vjp result").c_str());
    });
  }
  if (!vjp_all.is_none()) {
    PyCallable r(vjp_all);
    op.vjp_all([r, name](const Tensor& g, const std::vector<bool>& needs, const std::vector<Tensor>& in,
                         const Tensor& out) {
      nb::gil_scoped_acquire gil;
      nb::object res = r(g, needs, tensor_list(in), out);
      std::string what = "custom op '" + name + "': vjp_all result";
      EMBER_CHECK(nb::isinstance<nb::tuple>(res) || nb::isinstance<nb::list>(res), what,
                  ": expected a tuple with one cotangent (or None) per input");
      std::vector<Tensor> grads;
      for (nb::handle h : res) grads.push_back(h.is_none() ? Tensor() : as_tensor(h, what.c_str()));
      return grads;
    });
  }
  if (!jvp.is_none()) {
    PyCallable r(jvp);
    op.jvp([r, name](const std::vector<Tensor>& tangents, const std::vector<Tensor>& in, const Tensor& out) {
      nb::gil_scoped_acquire gil;
      return as_tensor(r(tensor_list(tangents), tensor_list(in), out), ("custom op '" + name + "': jvp result").c_str());
    });
  }
  return op;
}

}  // namespace

void bind_custom_op(nb::module_& m) {
  nb::class_<CustomOp>(m, "_CustomOp")
      .def("__call__", [](const CustomOp& op, const std::vector<Tensor>& in) { return op(in); }, nb::arg("inputs"),
           release_gil())
      .def_prop_ro("name", &CustomOp::name)
      .def_prop_ro("has_jvp", &CustomOp::has_jvp);
  m.def("_custom_op", &make_custom_op, nb::arg("name"), nb::arg("forward"), nb::arg("vjp").none(),
        nb::arg("vjp_all").none(), nb::arg("jvp").none());
  m.def("custom_op_names", &custom_op_names);

  nb::class_<GradcheckResult>(m, "GradcheckResult")
      .def_ro("ok", &GradcheckResult::ok)
      .def_ro("max_error", &GradcheckResult::max_error)
      .def_ro("mode", &GradcheckResult::mode)
      .def_ro("input", &GradcheckResult::input)
      .def_prop_ro("input_index", [](const GradcheckResult& r) { return nb::tuple(nb::cast(r.input_index)); })
      .def_prop_ro("output_index", [](const GradcheckResult& r) { return nb::tuple(nb::cast(r.output_index)); })
      .def_ro("analytic", &GradcheckResult::analytic)
      .def_ro("numeric", &GradcheckResult::numeric)
      .def_ro("message", &GradcheckResult::message)
      .def("__bool__", [](const GradcheckResult& r) { return r.ok; })
      .def("__repr__", [](const GradcheckResult& r) {
        return std::string("GradcheckResult(ok=") + (r.ok ? "True" : "False") + ", " + r.message + ")";
      });
  // f runs many times with the GIL held: gradcheck is about correctness, not speed.
  m.def("_gradcheck", [](nb::handle f, const std::vector<Tensor>& inputs, double eps, double atol, double rtol,
                         bool check_vjp, bool check_jvp, bool check_dot, uint64_t seed) {
    GradcheckOptions o;
    o.eps = eps;
    o.atol = atol;
    o.rtol = rtol;
    o.check_vjp = check_vjp;
    o.check_jvp = check_jvp;
    o.check_dot_product = check_dot;
    o.seed = seed;
    auto fn = [f](const std::vector<Tensor>& xs) { return as_tensor(nb::borrow(f)(nb::cast(xs)), "gradcheck: f's result"); };
    return gradcheck(fn, inputs, o);
  });
}

}  // namespace ember::py
