// Gradient checkpointing: trade compute for memory. checkpoint(f, xs) runs f without keeping any of
// its intermediate values for the gradient (only xs are kept) and records f as one node; its VJP
// runs f again on the saved inputs, under make_vjp, and pulls the cotangent back through that
// recomputation. A network of L blocks checkpointed per block keeps L block inputs alive instead
// of every activation inside every block.
//
//   Tensor y = checkpoint([&](const std::vector<Tensor>& in) { return block(in[0], in[1], in[2]); },
//                         {x, w1, w2});
//
// Rules, as in PyTorch's and JAX's checkpoints:
// - Eager training (requires_grad_ leaves, loss.backward()): f may use parameters it captures (a
//   module's forward); the replay in backward fills their .grad, as PyTorch's checkpoint does.
// - Under make_vjp/grad, every tensor that f should differentiate must be passed in xs; one that
//   the trace differentiates but f only captures is an ember::Error, since the replay could not
//   send it a gradient.
// - f must be deterministic and stay callable until backward; the default generator's state is
//   saved at the forward and restored for the replay, so dropout draws the same mask.
// - Higher order works under make_vjp: the replay records on the traces below, as any op would.
//   Forward mode (make_jvp through a checkpoint) computes f's JVP directly.
#pragma once
#include <vector>

#include "framework/core/autograd/autograd.h"

namespace ember {

Tensor checkpoint(const FnN& f, const std::vector<Tensor>& xs);
Tensor checkpoint(const Fn1& f, const Tensor& x);

}  // namespace ember
