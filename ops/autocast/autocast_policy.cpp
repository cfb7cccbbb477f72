// Autocast's two op lists, declared once, and the policy the engine applies at dispatch (it fills
// the core's hook, autocast::detail::policy, when the ops library loads).
#include "ops/autocast/autocast_policy.h"

#include <algorithm>

#include "framework/core/autograd/autocast.h"
#include "framework/core/autograd/op_table.h"
#include "ops/elementwise/elementwise.h"

namespace ember::autocast {

namespace {

// As PyTorch's CPU autocast lists: products in the lower precision; what sums many terms, takes
// exponentials or normalises in float32 (their kernels accumulate in float32 anyway, but a half
// result would round what the next op reads).
// (conv2d, in torch's list, has no half kernels yet; it joins this list when it declares them.)
const char* const kLowerPrecision[] = {"matmul", "linear", "attention"};
const char* const kFloat32[] = {"softmax", "log_softmax", "logsumexp", "cross_entropy", "layer_norm", "batch_norm",
                                "sum", "prod", "cumsum", "cumsum_reverse", "exp", "log", "pow"};

enum class Kind { Other, Lower, Float32 };

// Compares interned names (op.node_name), so a lookup is a few pointer comparisons.
struct Lists {
  std::vector<const char*> lower, f32;
  Lists() {
    for (const char* n : kLowerPrecision) lower.push_back(primitive_detail::intern(n));
    for (const char* n : kFloat32) f32.push_back(primitive_detail::intern(n));
  }
};

Kind kind_of(const OpInfo& op) {
  static const Lists lists;
  if (!op.builtin) return Kind::Other;  // a custom op is the user's to cast
  if (std::find(lists.lower.begin(), lists.lower.end(), op.node_name) != lists.lower.end()) return Kind::Lower;
  if (std::find(lists.f32.begin(), lists.f32.end(), op.node_name) != lists.f32.end()) return Kind::Float32;
  return Kind::Other;
}

bool declares(const OpInfo& op, DType d) { return std::find(op.dtypes.begin(), op.dtypes.end(), d) != op.dtypes.end(); }

// Casts each defined input of dtype `from(dt)` to `to`; true when any was cast.
template <class Pred>
bool cast_where(const std::vector<Tensor>& in, std::vector<Tensor>& out, Pred from, DType to) {
  bool changed = false;
  for (const Tensor& t : in) changed = changed || (t.defined() && from(t.dtype()));
  if (!changed) return false;
  out.clear();
  out.reserve(in.size());
  for (const Tensor& t : in) out.push_back(t.defined() && from(t.dtype()) ? cast(t, to) : t);
  return true;
}

// A listed op's floating inputs must agree once cast: its public function lets mixed dtypes
// through under autocast, counting on this cast (a float64 beside a float32 would not be).
void check_uniform(const OpInfo& op, const std::vector<Tensor>& args) {
  const Tensor* first = nullptr;
  for (const Tensor& t : args) {
    if (!t.defined() || !is_floating(t.dtype())) continue;
    if (!first) first = &t;
    EMBER_CHECK(t.dtype() == first->dtype(), "autocast: ", op.label, " got inputs of ", first->dtype(), " and ",
                t.dtype(), "; autocast does not cast float64 inputs, so convert them with .to(dtype) first");
  }
}

bool apply_policy(const OpInfo& op, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Kind k = kind_of(op);
  if (k == Kind::Lower) {
    const DType to = state().dtype;
    if (!declares(op, to)) return false;  // no kernel for the half dtype: the op runs as given
    const bool changed = cast_where(
        in, out, [to](DType d) { return d == DType::Float32 || (is_half(d) && d != to); }, to);
    check_uniform(op, changed ? out : in);
    return changed;
  }
  if (k == Kind::Float32) {
    const bool changed = cast_where(in, out, [](DType d) { return is_half(d); }, DType::Float32);
    check_uniform(op, changed ? out : in);
    return changed;
  }
  return false;
}

const bool registered = [] {
  detail::policy.set(apply_policy);
  return true;
}();

}  // namespace

std::vector<std::string> lower_precision_ops() { return {std::begin(kLowerPrecision), std::end(kLowerPrecision)}; }
std::vector<std::string> float32_ops() { return {std::begin(kFloat32), std::end(kFloat32)}; }

}  // namespace ember::autocast
