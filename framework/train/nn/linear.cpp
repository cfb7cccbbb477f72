#include "framework/train/nn/linear.h"

#include <cmath>

#include "framework/train/nn/init.h"
#include "ops/linear/linear.h"

namespace ember::nn {

Init parse_init(const std::string& s) {
  if (s == "default") return Init::Default;
  if (s == "kaiming") return Init::KaimingUniform;
  if (s == "xavier") return Init::XavierUniform;
  throw Error(str("unknown initialisation '", s, "' (expected default, kaiming or xavier)"));
}

const char* name(Init init) {
  switch (init) {
    case Init::Default: return "default";
    case Init::KaimingUniform: return "kaiming";
    case Init::XavierUniform: return "xavier";
  }
  return "?";
}

Linear::Linear(int64_t in, int64_t out, Generator& gen, LinearOptions opt) : in_features(in), out_features(out) {
  EMBER_CHECK(in > 0 && out > 0, "Linear: in_features and out_features must be positive, got ", in, " and ", out);
  EMBER_CHECK(is_floating(opt.dtype), "Linear: dtype must be float32 or float64, got ", opt.dtype);
  Tensor w = empty({out, in}, opt.dtype);
  Tensor b = opt.bias ? empty({out}, opt.dtype) : Tensor();
  double bound = 1.0 / std::sqrt(double(in));
  switch (opt.init) {
    case Init::Default:
      init::uniform_(w, -bound, bound, gen);
      if (b.defined()) init::uniform_(b, -bound, bound, gen);
      break;
    case Init::KaimingUniform:
      init::kaiming_uniform_(w, gen, init::gain("relu"));
      if (b.defined()) init::zeros_(b);
      break;
    case Init::XavierUniform:
      init::xavier_uniform_(w, gen, 1.0);
      if (b.defined()) init::zeros_(b);
      break;
  }
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor Linear::forward(const Tensor& x) {
  EMBER_CHECK(x.defined(), "Linear: input is undefined");
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == in_features, "Linear(", in_features, ", ", out_features,
              "): expected input of shape (..., ", in_features, "), got ", to_string(x.shape()));
  EMBER_CHECK(x.dtype() == weight.dtype(), "Linear: input is ", x.dtype(), " but the weight is ", weight.dtype());
  return linear(x, weight, bias);
}

std::string Linear::name() const {
  return str("Linear(", in_features, ", ", out_features, bias.defined() ? "" : ", bias=false", ")");
}

}  // namespace ember::nn
