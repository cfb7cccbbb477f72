// softmax, log_softmax and logsumexp: checks, dispatch to the fused row kernels, and the VJP/JVP
// rules, written with Ember ops on the saved output so that they differentiate again (first-order
// gradients on the CPU take the fused kernels in cpu/softmax_kernels.h instead, same formulas; the
// engine picks them when nothing they read is traced):
//   softmax:     dx = y * (g - sum(g * y))        (the same form maps tangents forward)
//   log_softmax: dx = g - exp(y) * sum(g)         t_y = t - sum(exp(y) * t)
//   logsumexp:   dx = g * softmax(x)              t_y = sum(softmax(x) * t)
#include "ops/softmax/softmax.h"

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/softmax/cpu/softmax_kernels.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

// 0-d inputs are handled as one row of length 1 by the public functions below.
int64_t checked_dim(const char* op, const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 tensor, got ", x.dtype(),
              to_string(x.shape()));
  return wrap_dim(dim, x.dim(), op);
}

// y * (v - sum(v * y)): softmax's VJP and JVP alike (its Jacobian is symmetric).
Tensor softmax_jacobian_times(const Tensor& y, const Tensor& v, int64_t d) {
  return y * (v - sum(v * y, {d}, true));
}

struct DimAttrs {
  int64_t dim;  // wrapped
  bool keepdim = true;
};
using DimCall = OpCall<DimAttrs>;
using DimOp = Primitive<DimAttrs>;

// A row op with one kernel per device (CPU and CUDA take the same arguments).
template <Tensor (*Cpu)(const Tensor&, int64_t), BackendHook<Tensor(const Tensor&, int64_t)>& Cuda>
DimOp row_op(const char* name) {
  return DimOp(name)
      .cpu([](const Args& x, const DimAttrs& a) { return KernelOut(Cpu(x[0], a.dim)); })
      .cuda([](const Args& x, const DimAttrs& a) { return KernelOut(Cuda(x[0], a.dim)); })
      .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16});
}
#define EMBER_ROW_OP(name) row_op<cpu::name, cuda_kernels::name>(#name)

struct SoftmaxPrims {
  DimOp softmax = EMBER_ROW_OP(softmax)
                      .saves({}, true)
                      .vjp([](const Tensor& g, const DimCall& c) { return Grads{softmax_jacobian_times(c.out, g, c.attrs.dim)}; })
                      .fused_vjp(Device::CPU, [](const Tensor& g, const DimCall& c) {
                        return Grads{cpu::softmax_backward(c.out, g, c.attrs.dim)};
                      })
                      .jvp([](const Args& t, const DimCall& c) { return softmax_jacobian_times(c.out, t[0], c.attrs.dim); });
  DimOp log_softmax = EMBER_ROW_OP(log_softmax)
                          .saves({}, true)
                          .vjp([](const Tensor& g, const DimCall& c) {
                            return Grads{g - exp(c.out) * sum(g, {c.attrs.dim}, true)};
                          })
                          .fused_vjp(Device::CPU, [](const Tensor& g, const DimCall& c) {
                            return Grads{cpu::log_softmax_backward(c.out, g, c.attrs.dim)};
                          })
                          .jvp([](const Args& t, const DimCall& c) {
                            return t[0] - sum(exp(c.out) * t[0], {c.attrs.dim}, true);
                          });
  // The kernels keep the reduced dim (size 1); without keepdim the result is squeezed here.
  DimOp logsumexp =
      DimOp("logsumexp")
          .all_devices([](const Args& x, const DimAttrs& a) { return logsumexp_kernel(x[0], a); })
          .dtypes({DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
          .saves({0}, false)
          .vjp([](const Tensor& g, const DimCall& c) {
            int64_t d = c.attrs.dim;
            return Grads{(c.attrs.keepdim ? g : g.unsqueeze(d)) * ember::softmax(c.in[0], d)};
          })
          .jvp([](const Args& t, const DimCall& c) {
            return sum(ember::softmax(c.in[0], c.attrs.dim) * t[0], {c.attrs.dim}, c.attrs.keepdim);
          });

  static KernelOut logsumexp_kernel(const Tensor& x, const DimAttrs& a) {
    Tensor y = x.device() == Device::CUDA ? cuda_kernels::logsumexp(x, a.dim) : cpu::logsumexp(x, a.dim);
    return a.keepdim ? y : y.squeeze(a.dim);
  }
};

const SoftmaxPrims& prims() {
  static const SoftmaxPrims p;
  return p;
}

}  // namespace

void declare_softmax_ops() { prims(); }

Tensor softmax(const Tensor& x, int64_t dim) {
  int64_t d = checked_dim("softmax", x, dim);
  if (x.dim() == 0) return softmax(x.reshape({1}), 0).reshape({});
  return prims().softmax({x}, {d});
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  int64_t d = checked_dim("log_softmax", x, dim);
  if (x.dim() == 0) return log_softmax(x.reshape({1}), 0).reshape({});
  return prims().log_softmax({x}, {d});
}

Tensor logsumexp(const Tensor& x, int64_t dim, bool keepdim) {
  int64_t d = checked_dim("logsumexp", x, dim);
  if (x.dim() == 0) return logsumexp(x.reshape({1}), 0, false);
  return prims().logsumexp({x}, {d, keepdim});
}

}  // namespace ember
