#include "framework/core/gradcheck.h"

#include <cmath>
#include <sstream>

#include "framework/core/autograd/autograd.h"

namespace ember {
namespace {

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

// The numeric Jacobian of f w.r.t. input i: column j is (f(x + eps e_j) - f(x - eps e_j)) / 2 eps.
std::vector<std::vector<double>> numeric_jacobian(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                  std::vector<Tensor> xs, size_t i, double eps) {
  Tensor x = from_vector(xs[i].to_vector<double>(), xs[i].shape());  // perturb a private copy, not the caller's data
  xs[i] = x;
  std::vector<std::vector<double>> cols;
  for (int64_t j = 0; j < x.numel(); ++j) {
    Shape idx = unravel(j, x.shape());
    double v = x.at(idx);
    x.set(idx, v + eps);
    std::vector<double> hi = f(xs).to_vector<double>();
    x.set(idx, v - eps);
    std::vector<double> lo = f(xs).to_vector<double>();
    x.set(idx, v);
    std::vector<double> col(hi.size());
    for (size_t k = 0; k < hi.size(); ++k) col[k] = (hi[k] - lo[k]) / (2 * eps);
    cols.push_back(std::move(col));
  }
  return cols;
}

void consider(GradcheckResult& r, const GradcheckOptions& opt, const char* mode, int input, const Shape& in_idx,
              const Shape& out_idx, double analytic, double numeric) {
  double err = std::abs(analytic - numeric) - opt.rtol * std::abs(numeric);
  if (std::isnan(err)) err = INFINITY;
  if (r.mode.empty() || err > r.max_error) {  // the worst element is a failure whenever any element fails
    r.max_error = err;
    r.mode = mode;
    r.input = input;
    r.input_index = in_idx;
    r.output_index = out_idx;
    r.analytic = analytic;
    r.numeric = numeric;
  }
  if (!(err <= opt.atol)) r.ok = false;
}

double dot(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& opt) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined() && inputs[i].dtype() == DType::Float64, "gradcheck: input ", i,
                " must be float64 (finite differences in float32 are too noisy), got ",
                inputs[i].defined() ? name(inputs[i].dtype()) : "undefined");
  }
  GradcheckResult r;
  std::vector<Tensor> xs;
  for (const Tensor& x : inputs) xs.push_back(x.detach());
  Tensor y = f(xs);
  EMBER_CHECK(y.dtype() == DType::Float64, "gradcheck: the function must return float64, got ", y.dtype());
  int64_t ny = y.numel();

  std::vector<std::vector<std::vector<double>>> J;  // J[i][j][k]: d y_k / d x_i[j]
  for (size_t i = 0; i < xs.size(); ++i) J.push_back(numeric_jacobian(f, xs, i, opt.eps));

  if (opt.check_vjp) {
    auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
    for (int64_t k = 0; k < ny; ++k) {
      Tensor u = zeros(y.shape(), DType::Float64);
      Shape oidx = unravel(k, y.shape());
      u.set(oidx, 1.0);
      std::vector<Tensor> g = vjp({u});
      for (size_t i = 0; i < xs.size(); ++i) {
        std::vector<double> gi = g[i].to_vector<double>();
        for (int64_t j = 0; j < xs[i].numel(); ++j)
          consider(r, opt, "vjp", int(i), unravel(j, xs[i].shape()), oidx, gi[size_t(j)], J[i][size_t(j)][size_t(k)]);
      }
    }
  }
  if (opt.check_jvp) {
    for (size_t i = 0; i < xs.size(); ++i)
      for (int64_t j = 0; j < xs[i].numel(); ++j) {
        std::vector<Tensor> vs;
        for (size_t q = 0; q < xs.size(); ++q) vs.push_back(zeros(xs[q].shape(), DType::Float64));
        Shape iidx = unravel(j, xs[i].shape());
        vs[i].set(iidx, 1.0);
        auto [ys, ts] = make_jvp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs, vs);
        std::vector<double> t = ts[0].to_vector<double>();
        for (int64_t k = 0; k < ny; ++k)
          consider(r, opt, "jvp", int(i), iidx, unravel(k, y.shape()), t[size_t(k)], J[i][size_t(j)][size_t(k)]);
      }
  }
  if (opt.check_dot_product && opt.check_vjp && opt.check_jvp) {
    Generator gen(opt.seed);
    std::vector<Tensor> vs;
    for (const Tensor& x : xs) vs.push_back(randn(x.shape(), DType::Float64, &gen));
    Tensor u = randn(y.shape(), DType::Float64, &gen);
    auto [ys, ts] = make_jvp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs, vs);
    auto [ys2, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
    std::vector<Tensor> g = vjp({u});
    double lhs = dot(ts[0], u), rhs = 0;
    for (size_t i = 0; i < xs.size(); ++i) rhs += dot(g[i], vs[i]);
    // The dot test reports only when every element passed: an element failure says more (which
    // input, which element, both values), and the dot error, scaled by the random u and v, would
    // otherwise outrank it.
    GradcheckResult dot;
    consider(dot, opt, "dot", -1, {}, {}, lhs, rhs);
    if (!dot.ok && r.ok) r = dot;
  }
  std::ostringstream os;
  os << (r.ok ? "gradcheck passed" : "gradcheck FAILED");
  if (r.mode == "dot")
    os << "; worst: dot-product test <Jv,u> = " << r.analytic << " vs <v,J^T u> = " << r.numeric;
  else if (r.input >= 0)
    os << "; worst: " << r.mode << ", input " << r.input << " element " << to_string(r.input_index) << ", output element "
       << to_string(r.output_index) << ": analytic " << r.analytic << " vs numeric " << r.numeric;
  r.message = os.str();
  return r;
}

}  // namespace ember
