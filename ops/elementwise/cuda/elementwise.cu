// CUDA kernels for the elementwise primitives: unary functions, binary functions with NumPy
// broadcasting, where and cast. The scalar formulas are the ones the CPU uses (apply_unary,
// apply_binary are __host__ __device__), so both devices compute the same thing.
//
// Each op gets its own kernel instantiation (the op is a template parameter), so the switch over
// the op kind folds away. Two paths per kernel: contiguous operands index directly; views and
// broadcasts go through OffsetCalc's div/mod chain.
#include "framework/cuda/indexing.cuh"
#include "framework/core/strided.h"
#include "framework/core/tensor.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
const T* base_ptr(const Tensor& t) {
  return static_cast<const T*>(t.impl()->storage->data());
}

template <class In, class Out, UnaryOp Op>
__global__ void unary_contiguous(const In* x, Out* o, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[i] = Out(apply_unary(Op, x[i]));
}

template <class In, class Out, UnaryOp Op>
__global__ void unary_strided(const In* x, Out* o, int64_t n, OffsetCalc<1> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    calc.offsets(i, off);
    o[i] = Out(apply_unary(Op, x[off[0]]));
  }
}

template <class T, UnaryOp Op>
Tensor unary_launch(const Tensor& x) {
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  int64_t n = x.numel();
  if (n == 0) return out;
  T* o = out.data<T>();
  if (x.is_contiguous()) {
    unary_contiguous<T, T, Op><<<blocks_for(n), kThreads>>>(base_ptr<T>(x) + x.offset(), o, n);
  } else {
    auto calc = make_offset_calc<1>(x.shape(), {x.strides()}, {x.offset()}, "unary op");
    unary_strided<T, T, Op><<<blocks_for(n), kThreads>>>(base_ptr<T>(x), o, n, calc);
  }
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

template <class T>
Tensor unary_typed(UnaryOp op, const Tensor& x) {
  switch (op) {
#define EMBER_CASE(K, ...) \
  case UnaryOp::K: return unary_launch<T, UnaryOp::K>(x);
    EMBER_UNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
  throw Error("unary op: unknown kind");
}

// The parameterised functions read x through OffsetCalc always: they are rarer than the plain
// ones, and one path keeps the kernel count down.
template <class T, UnaryParamOp Op>
__global__ void unary_param_strided(const T* x, T* o, int64_t n, OffsetCalc<1> calc, T a, T b) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    calc.offsets(i, off);
    o[i] = apply_unary_param(Op, x[off[0]], a, b);
  }
}

template <class T, UnaryParamOp Op>
Tensor unary_param_launch(const Tensor& x, double a, double b) {
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  int64_t n = x.numel();
  if (n == 0) return out;
  auto calc = make_offset_calc<1>(x.shape(), {x.strides()}, {x.offset()}, "unary op");
  unary_param_strided<T, Op><<<blocks_for(n), kThreads>>>(base_ptr<T>(x), out.data<T>(), n, calc, T(a), T(b));
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

template <class T>
Tensor unary_param_typed(UnaryParamOp op, const Tensor& x, double a, double b) {
  switch (op) {
#define EMBER_CASE(K) \
  case UnaryParamOp::K: return unary_param_launch<T, UnaryParamOp::K>(x, a, b);
    EMBER_CASE(Clamp) EMBER_CASE(LeakyRelu) EMBER_CASE(Elu) EMBER_CASE(Softplus)
#undef EMBER_CASE
  }
  throw Error("unary op: unknown kind");
}

template <class T, BinaryOp Op>
__global__ void binary_contiguous(const T* a, const T* b, T* o, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[i] = apply_binary(Op, a[i], b[i]);
}

template <class T, BinaryOp Op>
__global__ void binary_strided(const T* a, const T* b, T* o, int64_t n, OffsetCalc<2> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    calc.offsets(i, off);
    o[i] = apply_binary(Op, a[off[0]], b[off[1]]);
  }
}

template <class T, BinaryOp Op>
Tensor binary_launch(const Tensor& a, const Tensor& b, const Shape& shape) {
  Tensor out = empty(shape, a.dtype(), Device::CUDA);
  int64_t n = out.numel();
  if (n == 0) return out;
  T* o = out.data<T>();
  if (a.shape() == shape && b.shape() == shape && a.is_contiguous() && b.is_contiguous()) {
    binary_contiguous<T, Op><<<blocks_for(n), kThreads>>>(base_ptr<T>(a) + a.offset(), base_ptr<T>(b) + b.offset(), o, n);
  } else {
    auto calc = make_offset_calc<2>(
        shape, {broadcast_strides(a.shape(), a.strides(), shape), broadcast_strides(b.shape(), b.strides(), shape)},
        {a.offset(), b.offset()}, binary_name(Op));
    binary_strided<T, Op><<<blocks_for(n), kThreads>>>(base_ptr<T>(a), base_ptr<T>(b), o, n, calc);
  }
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

template <class T>
Tensor binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  switch (op) {
#define EMBER_CASE(K) \
  case BinaryOp::K: return binary_launch<T, BinaryOp::K>(a, b, shape);
    EMBER_CASE(Add) EMBER_CASE(Sub) EMBER_CASE(Mul) EMBER_CASE(Div) EMBER_CASE(Pow) EMBER_CASE(Max)
    EMBER_CASE(Min) EMBER_CASE(Gt) EMBER_CASE(Ge) EMBER_CASE(Lt) EMBER_CASE(Le) EMBER_CASE(Eq)
    EMBER_CASE(Ne)
#undef EMBER_CASE
  }
  throw Error("binary op: unknown kind");
}

template <class T>
__global__ void where_strided(const T* c, const T* a, const T* b, T* o, int64_t n, OffsetCalc<3> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    calc.offsets(i, off);
    o[i] = c[off[0]] != T(0) ? a[off[1]] : b[off[2]];
  }
}

template <class In, class Out>
__global__ void cast_strided(const In* x, Out* o, int64_t n, OffsetCalc<1> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    calc.offsets(i, off);
    o[i] = Out(x[off[0]]);
  }
}

void check_cuda(const Tensor& t, const char* op) {
  EMBER_CHECK(t.device() == Device::CUDA, op, ": expected a CUDA tensor, got one on ", t.device());
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  check_cuda(x, "unary op");
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] { return unary_typed<scalar_t>(op, x); });
}

Tensor unary_param(UnaryParamOp op, const Tensor& x, double a, double b) {
  check_cuda(x, "unary op");
  return EMBER_DISPATCH_FLOAT(x.dtype(), "unary op", [&] { return unary_param_typed<scalar_t>(op, x, a, b); });
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  check_cuda(a, binary_name(op));
  check_cuda(b, binary_name(op));
  return EMBER_DISPATCH_ALL(a.dtype(), binary_name(op), [&] { return binary_typed<scalar_t>(op, a, b, shape); });
}

Tensor cast(const Tensor& x, DType dtype) {
  check_cuda(x, "cast");
  Tensor out = empty(x.shape(), dtype, Device::CUDA);
  int64_t n = x.numel();
  if (n == 0) return out;
  auto calc = make_offset_calc<1>(x.shape(), {x.strides()}, {x.offset()}, "cast");
  EMBER_DISPATCH_ALL_AND_BOOL(x.dtype(), "cast", [&] {
    using In = scalar_t;
    EMBER_DISPATCH_ALL_AND_BOOL(dtype, "cast", [&] {
      cast_strided<In, scalar_t><<<blocks_for(n), kThreads>>>(base_ptr<In>(x), out.data<scalar_t>(), n, calc);
    });
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const Shape& shape) {
  check_cuda(cond, "where");
  check_cuda(a, "where");
  check_cuda(b, "where");
  Tensor c = cond.dtype() == a.dtype() ? cond : cast(cond, a.dtype());  // nonzero means true, as on the CPU
  Tensor out = empty(shape, a.dtype(), Device::CUDA);
  int64_t n = out.numel();
  if (n == 0) return out;
  auto calc = make_offset_calc<3>(shape,
                                  {broadcast_strides(c.shape(), c.strides(), shape),
                                   broadcast_strides(a.shape(), a.strides(), shape),
                                   broadcast_strides(b.shape(), b.strides(), shape)},
                                  {c.offset(), a.offset(), b.offset()}, "where");
  EMBER_DISPATCH_ALL_AND_BOOL(a.dtype(), "where", [&] {
    where_strided<scalar_t><<<blocks_for(n), kThreads>>>(base_ptr<scalar_t>(c), base_ptr<scalar_t>(a),
                                                         base_ptr<scalar_t>(b), out.data<scalar_t>(), n, calc);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::unary.set(&unary);
  cuda_kernels::unary_param.set(&unary_param);
  cuda_kernels::binary.set(&binary);
  cuda_kernels::cast.set(&cast);
  cuda_kernels::where.set(&where);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
