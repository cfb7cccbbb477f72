// Logical ops on masks: Bool in, Bool out, never recorded (a truth value has no derivative).
#include "framework/core/strided.h"
#include "ops/cuda_kernels.h"
#include "ops/elementwise/binary_kinds.h"
#include "ops/elementwise/cpu/loops.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace ember {

namespace {

// Nonzero is true, decided in x's own dtype (a cast would do the same; ne says why).
Tensor as_bool(const Tensor& x) { return x.dtype() == DType::Bool ? x.detach() : ne(x, scalar_like(x, 0.0)); }

// `via` is the arithmetic kind that is the logical op on 0/1 values (and = min, or = max,
// xor = ne): the CUDA kernels have no Bool instantiation, so there the masks go in as int64.
template <class F>
Tensor logical_binary(const char* op, BinaryOp via, const Tensor& a, const Tensor& b, F f) {
  EMBER_CHECK(a.defined() && b.defined(), op, ": an operand is undefined");
  EMBER_CHECK(a.device() == b.device(), op, ": device mismatch, ", a.device(), " vs ", b.device());
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor x = as_bool(a), y = as_bool(b);
  if (x.device() == Device::CUDA)
    return cast(cuda_kernels::binary(via, cast(x, DType::Int64), cast(y, DType::Int64), shape), DType::Bool);
  return cpu::binary_loop<bool>(x, y, shape, DType::Bool, f);
}

}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical_binary("logical_and", BinaryOp::Min, a, b, [](bool p, bool q) { return p && q; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical_binary("logical_or", BinaryOp::Max, a, b, [](bool p, bool q) { return p || q; });
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return logical_binary("logical_xor", BinaryOp::Ne, a, b, [](bool p, bool q) { return p != q; });
}
Tensor logical_not(const Tensor& x) {
  EMBER_CHECK(x.defined(), "logical_not: input is undefined");
  return eq(as_bool(x), scalar(0.0, DType::Bool, x.device()));
}

// Counting the true elements keeps these on the tensor's device; only the 0-d answer is compared.
Tensor any(const Tensor& x) {
  EMBER_CHECK(x.defined(), "any: input is undefined");
  Tensor count = ember::sum(cast(as_bool(x), DType::Int64));
  return gt(count, scalar_like(count, 0.0));
}
Tensor all(const Tensor& x) {
  EMBER_CHECK(x.defined(), "all: input is undefined");
  Tensor count = ember::sum(cast(logical_not(x), DType::Int64));
  return eq(count, scalar_like(count, 0.0));
}

}  // namespace ember
