// conv2d and its two gradient ops as primitives, and conv1d on top of conv2d. The three are
// closed under differentiation: y = conv(x, w) is bilinear, and with <dx(g, w), u> = <g, conv(u, w)>
// and <dw(x, g), v> = <g, conv(x, v)> each one's VJP is a combination of the other two, so grad of
// grad (and forward mode, by transposing the VJPs) needs no further kernels.
#include "ops/conv/conv.h"

#include "framework/core/autograd/primitive.h"
#include "ops/conv/conv_geometry.h"
#include "ops/conv/cpu/conv_kernels.h"
#include "ops/cuda_kernels.h"
#include "ops/op_list.h"
#include "ops/reduce/reduce.h"

namespace ember {

ConvGeometry conv_geometry(const char* op, const Shape& x, const Shape& w, const Conv2dOptions& o) {
  EMBER_CHECK(x.size() == 4, op, ": expected a 4-d input (N, C, H, W), got shape ", to_string(x));
  EMBER_CHECK(w.size() == 4, op, ": expected a 4-d weight (Cout, C / groups, kh, kw), got shape ", to_string(w),
              " for input ", to_string(x));
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(o.stride[size_t(i)] > 0, op, ": stride must be positive, got [", o.stride[0], ", ", o.stride[1], "]");
    EMBER_CHECK(o.dilation[size_t(i)] > 0, op, ": dilation must be positive, got [", o.dilation[0], ", ", o.dilation[1], "]");
    EMBER_CHECK(o.padding[size_t(i)] >= 0, op, ": padding must be >= 0, got [", o.padding[0], ", ", o.padding[1], "]");
  }
  EMBER_CHECK(o.groups > 0, op, ": groups must be positive, got ", o.groups);
  ConvGeometry g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.cout = w[0], g.kh = w[2], g.kw = w[3];
  g.sh = o.stride[0], g.sw = o.stride[1], g.ph = o.padding[0], g.pw = o.padding[1];
  g.dh = o.dilation[0], g.dw = o.dilation[1], g.groups = o.groups;
  EMBER_CHECK(g.kh > 0 && g.kw > 0, op, ": the kernel must be at least 1 x 1, got weight ", to_string(w));
  EMBER_CHECK(g.c % g.groups == 0 && g.cout % g.groups == 0 && g.cout > 0, op, ": ", g.groups,
              " groups need input channels and output channels divisible by it, got input ", to_string(x),
              " and weight ", to_string(w));
  EMBER_CHECK(w[1] == g.c / g.groups, op, ": weight ", to_string(w), " needs ", g.c / g.groups,
              " input channels per group in dim 1 for input ", to_string(x), " and ", g.groups, " groups");
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  EMBER_CHECK(eh <= g.h + 2 * g.ph && ew <= g.w + 2 * g.pw, op, ": the kernel (", eh, " x ", ew,
              " with dilation) is larger than the padded input (", g.h + 2 * g.ph, " x ", g.w + 2 * g.pw, ") of input ",
              to_string(x), ", weight ", to_string(w));
  g.oh = (g.h + 2 * g.ph - eh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - ew) / g.sw + 1;
  return g;
}

namespace {

struct ConvAttrs {
  Conv2dOptions opt;
  Shape shape;  // input_grad: the input's shape; weight_grad: the weight's shape; conv2d: unused
};
using ConvCall = OpCall<ConvAttrs>;

void check_tensor(const char* op, const char* what, const Tensor& t, const Tensor& like) {
  EMBER_CHECK(t.defined(), op, ": ", what, " is undefined");
  EMBER_CHECK(is_floating(t.dtype()), op, ": expected float32 or float64, got a ", t.dtype(), " ", what, " ",
              to_string(t.shape()));
  EMBER_CHECK(t.dtype() == like.dtype(), op, ": ", what, " is ", t.dtype(), " but the input is ", like.dtype());
  EMBER_CHECK(t.device() == like.device(), op, ": ", what, " is on ", t.device(), " but the input is on ", like.device());
}

Shape out_shape(const ConvGeometry& g) { return {g.n, g.cout, g.oh, g.ow}; }

const Primitive<ConvAttrs>& conv2d_op();
const Primitive<ConvAttrs>& input_grad_op();
const Primitive<ConvAttrs>& weight_grad_op();

Tensor conv_raw(const Tensor& x, const Tensor& w, const Conv2dOptions& o) { return conv2d_op()({x, w, Tensor()}, {o, {}}); }
Tensor input_grad_raw(const Tensor& g, const Tensor& w, const Shape& xs, const Conv2dOptions& o) {
  return input_grad_op()({g, w}, {o, xs});
}
Tensor weight_grad_raw(const Tensor& x, const Tensor& g, const Shape& ws, const Conv2dOptions& o) {
  return weight_grad_op()({x, g}, {o, ws});
}

const Primitive<ConvAttrs>& conv2d_op() {
  static const Primitive<ConvAttrs> p =
      Primitive<ConvAttrs>("conv2d")
          .cpu([](const Args& a, const ConvAttrs& at) {
            check_cpu(a[0], "conv2d");
            return cpu::conv2d_forward(conv_geometry("conv2d", a[0].shape(), a[1].shape(), at.opt), a[0], a[1], a[2]);
          })
          .cuda([](const Args& a, const ConvAttrs& at) {
            return cuda_kernels::conv2d_forward(conv_geometry("conv2d", a[0].shape(), a[1].shape(), at.opt), a[0], a[1],
                                                a[2]);
          })
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const ConvCall& c) {
            const Tensor &x = c.in[0], &w = c.in[1];
            Grads out(3);
            if (c.needs(0)) out[0] = input_grad_raw(g, w, x.shape(), c.attrs.opt);
            if (c.needs(1)) out[1] = weight_grad_raw(x, g, w.shape(), c.attrs.opt);
            if (c.needs(2)) out[2] = sum(g, {0, 2, 3});
            return out;
          });
  return p;
}

const Primitive<ConvAttrs>& input_grad_op() {
  static const Primitive<ConvAttrs> p =
      Primitive<ConvAttrs>("conv2d_input_grad")
          .cpu([](const Args& a, const ConvAttrs& at) {
            check_cpu(a[0], "conv2d_input_grad");
            return cpu::conv2d_input_grad(conv_geometry("conv2d_input_grad", at.shape, a[1].shape(), at.opt), a[0], a[1]);
          })
          .cuda([](const Args& a, const ConvAttrs& at) {
            return cuda_kernels::conv2d_input_grad(conv_geometry("conv2d_input_grad", at.shape, a[1].shape(), at.opt),
                                                   a[0], a[1]);
          })
          .saves({0, 1}, false)
          .vjp([](const Tensor& u, const ConvCall& c) {
            const Tensor &g = c.in[0], &w = c.in[1];
            Grads out(2);
            if (c.needs(0)) out[0] = conv_raw(u, w, c.attrs.opt);
            if (c.needs(1)) out[1] = weight_grad_raw(u, g, w.shape(), c.attrs.opt);
            return out;
          });
  return p;
}

const Primitive<ConvAttrs>& weight_grad_op() {
  static const Primitive<ConvAttrs> p =
      Primitive<ConvAttrs>("conv2d_weight_grad")
          .cpu([](const Args& a, const ConvAttrs& at) {
            check_cpu(a[0], "conv2d_weight_grad");
            return cpu::conv2d_weight_grad(conv_geometry("conv2d_weight_grad", a[0].shape(), at.shape, at.opt), a[0], a[1]);
          })
          .cuda([](const Args& a, const ConvAttrs& at) {
            return cuda_kernels::conv2d_weight_grad(conv_geometry("conv2d_weight_grad", a[0].shape(), at.shape, at.opt),
                                                    a[0], a[1]);
          })
          .saves({0, 1}, false)
          .vjp([](const Tensor& v, const ConvCall& c) {
            const Tensor &x = c.in[0], &g = c.in[1];
            Grads out(2);
            if (c.needs(0)) out[0] = input_grad_raw(g, v, x.shape(), c.attrs.opt);
            if (c.needs(1)) out[1] = conv_raw(x, v, c.attrs.opt);
            return out;
          });
  return p;
}

}  // namespace

void declare_conv_ops() {
  conv2d_op();
  input_grad_op();
  weight_grad_op();
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& opt) {
  EMBER_CHECK(x.defined(), "conv2d: input is undefined");
  check_tensor("conv2d", "weight", weight, x);
  check_tensor("conv2d", "input", x, x);
  ConvGeometry g = conv_geometry("conv2d", x.shape(), weight.shape(), opt);
  if (bias.defined()) {
    check_tensor("conv2d", "bias", bias, x);
    EMBER_CHECK(bias.shape() == Shape{g.cout}, "conv2d: bias has shape ", to_string(bias.shape()), " but weight ",
                to_string(weight.shape()), " needs ", to_string(Shape{g.cout}));
  }
  return conv2d_op()({x, weight, bias}, {opt, {}});
}

Tensor conv2d_input_grad(const Tensor& g, const Tensor& weight, const Shape& input_shape, const Conv2dOptions& opt) {
  EMBER_CHECK(g.defined(), "conv2d_input_grad: the output gradient is undefined");
  check_tensor("conv2d_input_grad", "weight", weight, g);
  ConvGeometry geo = conv_geometry("conv2d_input_grad", input_shape, weight.shape(), opt);
  EMBER_CHECK(g.shape() == out_shape(geo), "conv2d_input_grad: the output gradient has shape ", to_string(g.shape()),
              " but input ", to_string(input_shape), " and weight ", to_string(weight.shape()), " give outputs of shape ",
              to_string(out_shape(geo)));
  return input_grad_raw(g, weight, input_shape, opt);
}

Tensor conv2d_weight_grad(const Tensor& x, const Tensor& g, const Shape& weight_shape, const Conv2dOptions& opt) {
  EMBER_CHECK(x.defined(), "conv2d_weight_grad: input is undefined");
  check_tensor("conv2d_weight_grad", "output gradient", g, x);
  ConvGeometry geo = conv_geometry("conv2d_weight_grad", x.shape(), weight_shape, opt);
  EMBER_CHECK(g.shape() == out_shape(geo), "conv2d_weight_grad: the output gradient has shape ", to_string(g.shape()),
              " but input ", to_string(x.shape()), " and weight ", to_string(weight_shape), " give outputs of shape ",
              to_string(out_shape(geo)));
  return weight_grad_raw(x, g, weight_shape, opt);
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  EMBER_CHECK(x.defined() && weight.defined(), "conv1d: input or weight is undefined");
  EMBER_CHECK(x.dim() == 3, "conv1d: expected a 3-d input (N, C, L), got shape ", to_string(x.shape()));
  EMBER_CHECK(weight.dim() == 3, "conv1d: expected a 3-d weight (Cout, C / groups, k), got shape ",
              to_string(weight.shape()), " for input ", to_string(x.shape()));
  EMBER_CHECK(stride > 0 && dilation > 0 && padding >= 0 && groups > 0, "conv1d: stride, dilation and groups must be ",
              "positive and padding >= 0, got stride ", stride, ", padding ", padding, ", dilation ", dilation, ", groups ",
              groups, " for input ", to_string(x.shape()), " and weight ", to_string(weight.shape()));
  const int64_t ek = dilation * (weight.size(2) - 1) + 1;
  EMBER_CHECK(weight.size(2) > 0 && ek <= x.size(2) + 2 * padding, "conv1d: the kernel (", ek,
              " wide with dilation) is larger than the padded input (", x.size(2) + 2 * padding, ") of input ",
              to_string(x.shape()), ", weight ", to_string(weight.shape()));
  Conv2dOptions o;
  o.stride = {1, stride};
  o.padding = {0, padding};
  o.dilation = {1, dilation};
  o.groups = groups;
  return conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, o).squeeze(2);
}

}  // namespace ember
