#include "framework/core/autograd/primitive.h"

#include "framework/core/autograd/autograd.h"

namespace ember {

namespace {
thread_local bool t_fused_enabled = true;
thread_local bool t_extras_wanted = false;
}  // namespace

FusedBackwardGuard::FusedBackwardGuard(bool enabled) : prev_(t_fused_enabled) { t_fused_enabled = enabled; }
FusedBackwardGuard::~FusedBackwardGuard() { t_fused_enabled = prev_; }

bool extras_wanted() { return t_extras_wanted; }

namespace primitive_detail {

bool fused_enabled() { return t_fused_enabled; }

ExtrasWanted::ExtrasWanted() : prev_(t_extras_wanted) { t_extras_wanted = true; }
ExtrasWanted::~ExtrasWanted() { t_extras_wanted = prev_; }

namespace {
[[noreturn]] void refuse_dtype(const OpInfo& op, DType got) {
  std::string accepts;
  for (DType d : op.dtypes) accepts += (accepts.empty() ? "" : ", ") + std::string(name(d));
  throw Error(str(op.label, ": got ", got, ", accepts ", accepts, " (convert with .to(dtype))"));
}
}  // namespace

// Also refuses a floating input whose dtype the op does not declare (OpInfo::dtypes), before any
// kernel sees it. Integer and bool inputs (indices, masks, counts) are the op's own to check.
Device device_of(const OpInfo& op, const Args& args) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined()) continue;
    const DType dt = args[i].dtype();
    if (is_floating(dt) && std::find(op.dtypes.begin(), op.dtypes.end(), dt) == op.dtypes.end()) refuse_dtype(op, dt);
    if (!first) {
      first = &args[i];
      continue;
    }
    EMBER_CHECK(args[i].device() == first->device(), op.label, ": input ", i, " is on ", args[i].device(),
                " but the others are on ", first->device(), " (move them with .to(device))");
  }
  return first ? first->device() : Device::CPU;
}

void check_rule_result(const OpInfo& op, const char* rule, const Tensor& r, const Shape& shape, DType dtype,
                       const char* what, size_t i) {
  EMBER_CHECK(r.defined(), op.label, ": the ", rule, " rule returned an undefined tensor for ", what, " ", i);
  EMBER_CHECK(r.shape() == shape && r.dtype() == dtype, op.label, ": the ", rule, " rule returned ", r.dtype(),
              to_string(r.shape()), " for ", what, " ", i, ", expected ", dtype,
              to_string(shape));
}

bool any_traced(const Tensor& g, const Args& in, const Tensor& out, const std::vector<Tensor>& extras) {
  if (!autograd::grad_enabled()) return false;
  if (g.is_traced() || out.is_traced()) return true;
  for (const Tensor& t : in)
    if (t.is_traced()) return true;
  for (const Tensor& t : extras)
    if (t.is_traced()) return true;
  return false;
}

Tensor add_tangents(const Tensor& acc, const Tensor& t) { return acc.defined() ? autograd::add_values(acc, t) : t; }

Tensor transpose_linear(const std::function<Tensor(const Tensor&)>& lin, const autograd::Node& node, const Tensor& t) {
  auto [y, transpose] = make_vjp(lin, zeros(node.shape, node.dtype, node.device));
  (void)y;
  return transpose(t);
}

}  // namespace primitive_detail
}  // namespace ember
