// Specs of the elementwise primitives: unary functions, binary ops with broadcasting, where, cast.
#include <cmath>

#include "op_table/op_spec.h"

namespace ember::optable {
namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

// Awkward shapes and layouts for one-input ops: 0-d, length 1 and 7, 33 columns, and transposed,
// strided and expanded views.
std::vector<Tensor> unary_inputs(bool positive) {
  return {rand64({}, 1, positive),          rand64({1}, 2, positive),          rand64({7}, 3, positive),
          rand64({3, 33}, 4, positive),     transposed64({7, 5}, 5, positive), strided64({4, 9}, 6, positive),
          expanded64({3, 7}, 7, positive)};
}

std::string describe(const Tensor& x) {
  std::string s = to_string(x.shape());
  if (!x.is_contiguous()) s += x.dim() > 0 && x.strides()[0] == 0 ? " expanded" : " non-contiguous";
  return s;
}

void unary(std::vector<OpSpec>& out, const char* op, Unary f, double (*ref)(double), bool positive = false) {
  OpSpec s;
  s.op = op;
  s.samples = [=] {
    std::vector<Sample> v;
    for (const Tensor& x : unary_inputs(positive)) {
      Sample smp;
      smp.label = describe(x);
      smp.inputs = {x};
      smp.call = [f](const std::vector<Tensor>& a) { return f(a[0]); };
      smp.reference = [ref](const std::vector<Tensor>& a) { return ref_unary(a[0], ref); };
      v.push_back(smp);
    }
    return v;
  };
  s.bench = [=](int64_t n) {
    Sample smp = s.samples()[3];
    smp.inputs = {rand64({n, n}, 9, positive)};
    return smp;
  };
  s.errors = {{"an int64 input", [f] { f(arange(4)); }, str(op, ": expected a floating tensor (float32, float64, bfloat16, float16), got int64")},
              {"an undefined input", [f] { f(Tensor()); }, str(op, ": input is undefined")}};
  out.push_back(s);
}

double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double ref_gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Operand pairs: equal shapes, broadcasting both ways, a 0-d operand, length-1 against 7, and
// non-contiguous views.
std::vector<std::pair<Tensor, Tensor>> binary_inputs(bool positive_a, bool positive_b) {
  return {{rand64({3, 4}, 11, positive_a), rand64({3, 4}, 12, positive_b)},
          {rand64({3, 1}, 13, positive_a), rand64({4}, 14, positive_b)},
          {rand64({}, 15, positive_a), rand64({2, 3}, 16, positive_b)},
          {rand64({1}, 17, positive_a), rand64({7}, 18, positive_b)},
          {transposed64({5, 7}, 19, positive_a), strided64({5, 7}, 20, positive_b)},
          {expanded64({4, 33}, 21, positive_a), rand64({33}, 22, positive_b)}};
}

void binary(std::vector<OpSpec>& out, const char* op, Binary f, double (*ref)(double, double), bool pos_a = false,
            bool pos_b = false) {
  OpSpec s;
  s.op = op;
  s.samples = [=] {
    std::vector<Sample> v;
    for (const auto& [a, b] : binary_inputs(pos_a, pos_b)) {
      Sample smp;
      smp.label = describe(a) + " with " + describe(b);
      smp.inputs = {a, b};
      smp.call = [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); };
      smp.reference = [ref](const std::vector<Tensor>& x) { return ref_binary(x[0], x[1], ref); };
      v.push_back(smp);
    }
    return v;
  };
  s.bench = [=](int64_t n) {
    Sample smp = s.samples()[0];
    smp.inputs = {rand64({n, n}, 23, pos_a), rand64({n, n}, 24, pos_b)};
    return smp;
  };
  s.errors = {{"float32 with float64", [f] { f(rand64({2}, 1).to(DType::Float32), rand64({2}, 2)); },
               str(op, ": dtype mismatch")},
              {"shapes that do not broadcast", [f] { f(rand64({2, 3}, 1), rand64({4}, 2)); }, op}};
  out.push_back(s);
}

double maxd(double a, double b) { return a >= b ? a : b; }
double mind(double a, double b) { return a <= b ? a : b; }

void where_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "where";
  s.samples = [] {
    std::vector<Sample> v;
    struct Case {
      Shape c, a, b;
    };
    for (const Case& k : {Case{{3, 4}, {3, 4}, {3, 4}}, Case{{3, 1}, {4}, {}}, Case{{7}, {1}, {7}}}) {
      Sample smp;
      // A checkerboard condition: both branches are taken in every sample.
      Tensor cond = ref_tensor(k.c, [](const Shape& i) {
        int64_t t = 0;
        for (int64_t v : i) t += v;
        return double((t + 1) % 2);
      });
      smp.label = "cond " + to_string(k.c) + ", " + to_string(k.a) + ", " + to_string(k.b);
      smp.inputs = {cond, rand64(k.a, 32), rand64(k.b, 33)};
      smp.differentiable = {1, 2};
      smp.call = [](const std::vector<Tensor>& x) { return where(x[0], x[1], x[2]); };
      smp.reference = [](const std::vector<Tensor>& x) {
        Shape sh = ref_broadcast(ref_broadcast(x[0].shape(), x[1].shape()), x[2].shape());
        return ref_tensor(sh, [&](const Shape& i) {
          return x[0].at(broadcast_index(i, x[0].shape())) != 0 ? x[1].at(broadcast_index(i, x[1].shape()))
                                                               : x[2].at(broadcast_index(i, x[2].shape()));
        });
      };
      v.push_back(smp);
    }
    return v;
  };
  s.errors = {{"shapes that do not broadcast",
               [] { where(rand64({2}, 1), rand64({3}, 2), rand64({3}, 3)); }, "where"},
              {"an undefined condition", [] { where(Tensor(), rand64({3}, 2), rand64({3}, 3)); },
               "where: condition must be defined"}};
  out.push_back(s);
}

// cast to float32 and back: the rounding is the op; gradcheck steps over it with a wide eps.
void cast_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "cast";
  s.samples = [] {
    std::vector<Sample> v;
    for (const Tensor& x : unary_inputs(false)) {
      Sample smp;
      smp.label = describe(x) + " to float32 and back";
      smp.inputs = {x};
      smp.call = [](const std::vector<Tensor>& a) {
        DType back = a[0].dtype();
        return cast(cast(a[0], back == DType::Float32 ? DType::Float64 : DType::Float32), back);
      };
      smp.reference = [](const std::vector<Tensor>& a) { return ref_unary(a[0], [](double x) { return double(float(x)); }); };
      smp.atol = 0;
      smp.rtol = 0;
      smp.grad_eps = 1e-2;
      v.push_back(smp);
    }
    return v;
  };
  s.errors = {{"an undefined input", [] { cast(Tensor(), DType::Float32); }, "cast: input is undefined"}};
  out.push_back(s);
}

}  // namespace

void add_elementwise_specs(std::vector<OpSpec>& out) {
  unary(out, "neg", neg, [](double x) { return -x; });
  unary(out, "exp", exp, [](double x) { return std::exp(x); });
  unary(out, "log", log, [](double x) { return std::log(x); }, true);
  unary(out, "sin", sin, [](double x) { return std::sin(x); });
  unary(out, "cos", cos, [](double x) { return std::cos(x); });
  unary(out, "tanh", tanh, [](double x) { return std::tanh(x); });
  unary(out, "sigmoid", sigmoid, ref_sigmoid);
  unary(out, "relu", relu, [](double x) { return x > 0 ? x : 0.0; });
  unary(out, "sqrt", sqrt, [](double x) { return std::sqrt(x); }, true);
  unary(out, "erf", erf, [](double x) { return std::erf(x); });
  unary(out, "abs", abs, [](double x) { return std::fabs(x); });
  unary(out, "square", square, [](double x) { return x * x; });
  unary(out, "sign", sign, [](double x) { return double((x > 0) - (x < 0)); });
  unary(out, "log1p", log1p, [](double x) { return std::log(1 + x); }, true);
  unary(out, "expm1", expm1, [](double x) { return std::exp(x) - 1; });
  unary(out, "silu", silu, [](double x) { return x * ref_sigmoid(x); });
  unary(out, "clamp", [](const Tensor& x) { return clamp(x, -0.5, 0.7); },
        [](double x) { return x < -0.5 ? -0.5 : (x > 0.7 ? 0.7 : x); });
  unary(out, "leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.2); }, [](double x) { return x > 0 ? x : 0.2 * x; });
  unary(out, "elu", [](const Tensor& x) { return elu(x, 1.3); }, [](double x) { return x > 0 ? x : 1.3 * (std::exp(x) - 1); });
  // A low threshold, so that some samples take the linear branch.
  unary(out, "softplus", [](const Tensor& x) { return softplus(x, 1.5, 2.0); },
        [](double x) { return 1.5 * x > 2.0 ? x : std::log(1 + std::exp(1.5 * x)) / 1.5; });
  out.back().errors.push_back({"beta = 0", [] { softplus(rand64({2}, 1), 0.0); }, "softplus: beta must be positive"});
  out[out.size() - 4].errors.push_back(
      {"lo above hi", [] { clamp(rand64({2}, 1), 1.0, -1.0); }, "clamp: the lower bound 1 is above the upper bound -1"});
  unary(out, "gelu", [](const Tensor& x) { return gelu(x, false); }, ref_gelu);
  unary(out, "gelu_tanh", [](const Tensor& x) { return gelu(x, true); }, ref_gelu_tanh);
  binary(out, "add", add, [](double a, double b) { return a + b; });
  binary(out, "sub", sub, [](double a, double b) { return a - b; });
  binary(out, "mul", mul, [](double a, double b) { return a * b; });
  binary(out, "div", div, [](double a, double b) { return a / b; }, false, true);
  binary(out, "pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); },
         [](double a, double b) { return std::pow(a, b); }, true, false);
  binary(out, "maximum", maximum, maxd);
  binary(out, "minimum", minimum, mind);
  where_spec(out);
  cast_spec(out);
}

}  // namespace ember::optable
