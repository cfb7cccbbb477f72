// max_pool2d as a primitive (its kernel saves where each maximum was); avg_pool2d and
// adaptive_avg_pool2d as compositions of differentiable ops (conv2d, matmul), which gives them
// their gradients of every order for free.
//
// max_pool2d's VJP scatters g to the saved indices. Written with Ember ops it is an
// embedding_backward over one-element rows (whose own VJP, a gather, is embedding), so that grad
// of grad works, on either device; first-order CPU gradients take the fused scatter kernel instead.
#include "ops/pool/pool.h"

#include <cmath>

#include "framework/core/autograd/primitive.h"
#include "ops/conv/conv.h"
#include "ops/embedding/embedding.h"
#include "ops/matmul/matmul.h"
#include "ops/op_list.h"
#include "ops/pool/cpu/max_pool_kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {
namespace {

std::string pair_str(Pair p) { return str("[", p[0], ", ", p[1], "]"); }

void check_input(const char* op, const Tensor& x) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(x.dim() == 4, op, ": expected a 4-d input (N, C, H, W), got shape ", to_string(x.shape()));
  EMBER_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 input, got ", x.dtype(), " ",
              to_string(x.shape()));
}

cpu::PoolGeometry pool_geometry(const char* op, const Shape& x, Pair k, Pair s, Pair p, Pair d) {
  if (s[0] == 0 && s[1] == 0) s = k;
  EMBER_CHECK(k[0] > 0 && k[1] > 0, op, ": kernel size must be positive, got ", pair_str(k), " for input ", to_string(x));
  EMBER_CHECK(s[0] > 0 && s[1] > 0, op, ": stride must be positive, got ", pair_str(s), " for input ", to_string(x));
  EMBER_CHECK(d[0] > 0 && d[1] > 0, op, ": dilation must be positive, got ", pair_str(d), " for input ", to_string(x));
  const int64_t eh = d[0] * (k[0] - 1) + 1, ew = d[1] * (k[1] - 1) + 1;
  EMBER_CHECK(p[0] >= 0 && p[1] >= 0 && 2 * p[0] <= eh && 2 * p[1] <= ew, op, ": padding must be >= 0 and at most half ",
              "the (dilated) kernel ", pair_str({eh, ew}), ", got ", pair_str(p), " for input ", to_string(x));
  EMBER_CHECK(eh <= x[2] + 2 * p[0] && ew <= x[3] + 2 * p[1], op, ": the kernel ", pair_str({eh, ew}),
              " is larger than the padded input ", pair_str({x[2] + 2 * p[0], x[3] + 2 * p[1]}), " of input ", to_string(x));
  cpu::PoolGeometry g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1], g.ph = p[0], g.pw = p[1], g.dh = d[0], g.dw = d[1];
  g.oh = (g.h + 2 * g.ph - eh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - ew) / g.sw + 1;
  return g;
}

struct MaxPoolAttrs {
  cpu::PoolGeometry geo;
};

const Primitive<MaxPoolAttrs>& max_pool_op() {
  static const Primitive<MaxPoolAttrs> p =
      Primitive<MaxPoolAttrs>("max_pool2d")
          .cpu([](const Args& a, const MaxPoolAttrs& at) {
            check_cpu(a[0], "max_pool2d");
            Tensor idx;
            Tensor y = cpu::max_pool2d(at.geo, a[0], &idx);
            return KernelOut(y, {idx});
          })
          .cuda([](const Args& a, const MaxPoolAttrs& at) {
            Tensor idx;
            Tensor y = cuda_kernels::max_pool2d(at.geo, a[0], &idx);
            return KernelOut(y, {idx});
          })
          .saves({}, false)
          .vjp([](const Tensor& g, const OpCall<MaxPoolAttrs>& c) {
            const Shape& xs = c.in_shape(0);
            return Grads{embedding_backward(g.unsqueeze(-1), c.extras[0], numel(xs)).reshape(xs)};
          })
          .fused_vjp(Device::CPU, [](const Tensor& g, const OpCall<MaxPoolAttrs>& c) {
            return Grads{cpu::max_pool2d_scatter(c.attrs.geo, g, c.extras[0])};
          });
  return p;
}

// The (out x in) matrix whose row i averages adaptive window i of a length-`in` axis.
Tensor averaging_matrix(int64_t out, int64_t in, DType dtype) {
  Tensor m = zeros({out, in}, DType::Float64);
  double* pm = m.data<double>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t lo = i * in / out, hi = ((i + 1) * in + out - 1) / out;
    for (int64_t j = lo; j < hi; ++j) pm[i * in + j] = 1.0 / double(hi - lo);
  }
  return m.to(dtype);
}

}  // namespace

void declare_pool_ops() { max_pool_op(); }

Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride, Pair padding, Pair dilation) {
  check_input("max_pool2d", x);
  return max_pool_op()({x}, {pool_geometry("max_pool2d", x.shape(), kernel, stride, padding, dilation)});
}

Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride, Pair padding) {
  check_input("avg_pool2d", x);
  cpu::PoolGeometry g = pool_geometry("avg_pool2d", x.shape(), kernel, stride, padding, {1, 1});
  Tensor w = full({g.c, 1, g.kh, g.kw}, 1.0 / double(g.kh * g.kw), x.dtype(), x.device());
  Conv2dOptions o;
  o.stride = {g.sh, g.sw};
  o.padding = {g.ph, g.pw};
  o.groups = g.c;
  return conv2d(x, w, Tensor(), o);
}

Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size) {
  check_input("adaptive_avg_pool2d", x);
  EMBER_CHECK(output_size[0] > 0 && output_size[1] > 0, "adaptive_avg_pool2d: the output size must be positive, got ",
              pair_str(output_size), " for input ", to_string(x.shape()));
  EMBER_CHECK(x.size(2) > 0 && x.size(3) > 0, "adaptive_avg_pool2d: the input needs a non-empty H and W, got shape ",
              to_string(x.shape()));
  Tensor ah = averaging_matrix(output_size[0], x.size(2), x.dtype()).to(x.device());
  Tensor aw = averaging_matrix(output_size[1], x.size(3), x.dtype()).to(x.device());
  return matmul(matmul(ah, x), aw.t());
}

}  // namespace ember
