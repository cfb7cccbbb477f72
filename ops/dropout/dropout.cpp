// dropout: checks, one draw from the generator per call (the seed of a counter-based mask, see
// keep_mask.h), dispatch, and the rules. The mask is a constant, so VJP and JVP both multiply by it;
// the kernel saves it for them.
#include "ops/dropout/dropout.h"

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/dropout/cpu/dropout_kernels.h"
#include "ops/elementwise/elementwise.h"
#include "ops/cuda_kernels.h"

namespace ember {

namespace {

Tensor dropout_kernel(const Tensor& x, double p, uint64_t seed, Tensor* mask) {
  if (x.device() == Device::CUDA) return cuda_kernels::dropout(x, p, seed, mask);
  check_cpu(x, "dropout");
  return cpu::dropout(x, p, seed, mask);
}

struct DropoutAttrs {
  double p;
  uint64_t seed;
};

// The kernel saves its mask as an extra; the rules multiply by it (a constant).
KernelOut kernel(const Args& a, const DropoutAttrs& at) {
  Tensor mask;
  Tensor y = dropout_kernel(a[0], at.p, at.seed, &mask);
  return {y, {mask}};
}

const Primitive<DropoutAttrs>& dropout_op() {
  static const Primitive<DropoutAttrs> p =
      Primitive<DropoutAttrs>("dropout")
          .all_devices(kernel)
          .saves({}, false)
          .vjp([](const Tensor& g, const OpCall<DropoutAttrs>& c) { return Grads{g * c.extras[0]}; })
          .jvp([](const Args& t, const OpCall<DropoutAttrs>& c) { return t[0] * c.extras[0]; });
  return p;
}

}  // namespace

void declare_dropout_ops() { dropout_op(); }

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  EMBER_CHECK(x.defined(), "dropout: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "dropout: expected a float32 or float64 input, got ", x.dtype(),
              to_string(x.shape()));
  EMBER_CHECK(p >= 0 && p < 1, "dropout: p must lie in [0, 1), got ", p);
  if (!training || p == 0) return x;
  uint64_t seed = (gen ? *gen : default_generator()).next_u64();
  return dropout_op()({x}, DropoutAttrs{p, seed});
}

}  // namespace ember
