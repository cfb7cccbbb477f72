// Autocast: a per-thread scope in which the engine runs some ops in a lower-precision dtype
// (bfloat16 or float16) and others in float32, as torch.autocast does:
//
//   { ember::autocast::Guard amp(DType::BFloat16);
//     Tensor loss = cross_entropy(model(x), y);   // matmuls in bf16, the loss in float32
//   }
//   loss.backward();   // float32 leaves receive float32 gradients
//
// Which op goes where is one pair of lists in the ops layer (ops/autocast/autocast_policy.cpp),
// applied by the engine (Primitive::apply) before an op runs, through the differentiable cast, so
// gradients flow back to the float32 inputs in float32. The policy fills the hook below when the
// ops library loads, which keeps the core free of ops. Off by default; when off, the engine pays
// one thread-local read per op.
#pragma once
#include <vector>

#include "framework/core/backend_hook.h"
#include "framework/core/tensor.h"

namespace ember {
struct OpInfo;
}

namespace ember::autocast {

// This thread's autocast setting.
struct State {
  bool enabled = false;
  DType dtype = DType::BFloat16;  // the lower precision matmul-family ops run in
};
State state();
void set_state(const State& s);  // ember::Error unless s.dtype is BFloat16 or Float16
inline bool is_enabled() { return state().enabled; }

// Sets the thread's autocast state for its lifetime and restores the previous one on exit (also
// when an exception leaves the scope); nests. enabled = false turns autocast off inside.
// ember::Error for a dtype other than BFloat16 or Float16.
class Guard {
 public:
  explicit Guard(DType dtype = DType::BFloat16, bool enabled = true);
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  State prev_;
};

namespace detail {
// True when autocast is on and not suspended: the engine's one check per op.
bool active();
// Turns autocast off for its lifetime without changing state(): the engine holds one while an op
// it has already cast runs (so kernels that call other ops are not cast again) and during a
// backward pass (whose rules run in the dtypes the forward chose). Suspend(false) lifts an
// enclosing one: checkpoint's replay of a forward pass inside backward.
class Suspend {
 public:
  explicit Suspend(bool suspend = true);
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool prev_;
};
// The policy: writes the inputs `op` should run on into `out` and returns true, or returns false
// when the op runs on `in` unchanged. Filled by ops/autocast/autocast_policy.cpp.
extern BackendHook<bool(const OpInfo& op, const std::vector<Tensor>& in, std::vector<Tensor>& out)> policy;
}  // namespace detail

}  // namespace ember::autocast
