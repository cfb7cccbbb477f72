#include "framework/core/autograd/autocast.h"

#include "framework/core/error.h"

namespace ember::autocast {

namespace {
thread_local State t_state;
thread_local bool t_suspended = false;

void check_dtype(DType d) {
  EMBER_CHECK(d == DType::BFloat16 || d == DType::Float16, "autocast: the dtype must be bfloat16 or float16, got ",
              d);
}
}  // namespace

State state() { return t_state; }

void set_state(const State& s) {
  check_dtype(s.dtype);
  t_state = s;
}

Guard::Guard(DType dtype, bool enabled) : prev_(t_state) { set_state(State{enabled, dtype}); }
Guard::~Guard() { t_state = prev_; }

namespace detail {

bool active() { return t_state.enabled && !t_suspended; }

Suspend::Suspend(bool suspend) : prev_(t_suspended) { t_suspended = suspend; }
Suspend::~Suspend() { t_suspended = prev_; }

BackendHook<bool(const OpInfo&, const std::vector<Tensor>&, std::vector<Tensor>&)> policy("autocast policy");

}  // namespace detail
}  // namespace ember::autocast
