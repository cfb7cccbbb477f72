// The C++ layers' initialisation and the C++ optimizers. ember.nn's Module tree is Python (so that
// users subclass it in Python); its Linear and Embedding take their initial weights from the C++
// layers here, so that a seed gives the same numbers in both languages.
#include "bindings.h"

namespace ember::py {
namespace {

nb::tuple linear_init(int64_t in, int64_t out, uint64_t seed, const std::string& init, DType dtype, bool bias) {
  Generator gen(seed);
  nn::LinearOptions o;
  o.bias = bias;
  o.init = nn::parse_init(init);
  o.dtype = dtype;
  nn::Linear l(in, out, gen, o);
  return nb::make_tuple(l.weight.detach(), l.bias.defined() ? nb::cast(l.bias.detach()) : nb::none());
}

Tensor embedding_init(int64_t n, int64_t dim, uint64_t seed, double stddev, DType dtype) {
  Generator gen(seed);
  nn::Embedding e(n, dim, gen, stddev, dtype);
  return e.weight.detach();
}


}  // namespace

void bind_nn_optim(nb::module_& m) {
  m.def("_linear_init", &linear_init, nb::arg("in_features"), nb::arg("out_features"), nb::arg("seed"),
        nb::arg("init"), nb::arg("dtype"), nb::arg("bias"));
  m.def("_embedding_init", &embedding_init, nb::arg("num_embeddings"), nb::arg("dim"), nb::arg("seed"),
        nb::arg("stddev"), nb::arg("dtype"));

  nb::class_<optim::Optimizer>(m, "Optimizer")
      .def("step", &optim::Optimizer::step, release_gil())
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def_prop_rw("lr", &optim::Optimizer::lr, &optim::Optimizer::set_lr)
      .def_prop_ro("steps", &optim::Optimizer::steps)
      .def_prop_ro("kind", &optim::Optimizer::kind)
      .def("params", &optim::Optimizer::params)
      .def("state_dict", &optim::Optimizer::state_dict)
      .def("load_state_dict", &optim::Optimizer::load_state_dict, nb::arg("state"))
      .def("set_use_fused", &optim::Optimizer::set_use_fused, nb::arg("on"));

  nb::class_<optim::SGD, optim::Optimizer>(m, "SGD")
      .def("__init__", [](optim::SGD* self, std::vector<Tensor> params, double lr, double momentum, bool nesterov,
                          double weight_decay) {
        optim::SGDOptions o;
        o.lr = lr;
        o.momentum = momentum;
        o.nesterov = nesterov;
        o.weight_decay = weight_decay;
        new (self) optim::SGD(std::move(params), o);
      }, nb::arg("params"), nb::arg("lr") = 0.01, nb::arg("momentum") = 0.0, nb::arg("nesterov") = false,
           nb::arg("weight_decay") = 0.0);

  auto adam_options = [](double lr, std::pair<double, double> betas, double eps, double wd) {
    optim::AdamOptions o;
    o.lr = lr;
    o.beta1 = betas.first;
    o.beta2 = betas.second;
    o.eps = eps;
    o.weight_decay = wd;
    return o;
  };
  nb::class_<optim::Adam, optim::Optimizer>(m, "Adam")
      .def("__init__", [adam_options](optim::Adam* self, std::vector<Tensor> params, double lr,
                                      std::pair<double, double> betas, double eps, double wd) {
        new (self) optim::Adam(std::move(params), adam_options(lr, betas, eps, wd));
      }, nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = std::make_pair(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0);
  nb::class_<optim::AdamW, optim::Adam>(m, "AdamW")
      .def("__init__", [adam_options](optim::AdamW* self, std::vector<Tensor> params, double lr,
                                      std::pair<double, double> betas, double eps, double wd) {
        new (self) optim::AdamW(std::move(params), adam_options(lr, betas, eps, wd));
      }, nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = std::make_pair(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.01);

  nb::class_<optim::LrSchedule>(m, "LrSchedule")
      .def("__init__", [](optim::LrSchedule* self, const std::string& kind, double base_lr, int64_t warmup_steps,
                          int64_t total_steps, double min_lr, int64_t step_size, double gamma) {
        new (self) optim::LrSchedule();
        self->kind = optim::parse_lr_schedule(kind);
        self->base_lr = base_lr;
        self->warmup_steps = warmup_steps;
        self->total_steps = total_steps;
        self->min_lr = min_lr;
        self->step_size = step_size;
        self->gamma = gamma;
        self->validate();
      }, nb::arg("kind") = "constant", nb::arg("base_lr") = 1e-3, nb::arg("warmup_steps") = 0,
           nb::arg("total_steps") = 0, nb::arg("min_lr") = 0.0, nb::arg("step_size") = 1, nb::arg("gamma") = 0.1)
      .def("__call__", &optim::LrSchedule::operator(), nb::arg("step"));
  m.def("clip_grad_norm", &optim::clip_grad_norm, nb::arg("params"), nb::arg("max_norm"), release_gil());
  m.def("grad_norm", &optim::grad_norm, nb::arg("params"), release_gil());
}

}  // namespace ember::py
