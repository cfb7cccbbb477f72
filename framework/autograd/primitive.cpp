#include "framework/autograd/primitive.h"

#include <mutex>
#include <set>

#include "framework/autograd/autograd.h"

namespace ember {

bool OpInfo::has_variant(Device d, const std::string& v) const {
  for (const auto& [dev, name] : variants)
    if (dev == d && name == v) return true;
  return false;
}

namespace {
std::mutex g_table_mutex;
std::vector<std::shared_ptr<const OpInfo>>& table() {
  static std::vector<std::shared_ptr<const OpInfo>> ops;  // kept alive: recorded nodes point into them
  return ops;
}
thread_local bool t_fused_enabled = true;
struct Override {
  const OpInfo* op;
  std::string variant;
};
thread_local std::vector<Override> t_overrides;
}  // namespace

std::vector<std::shared_ptr<const OpInfo>> registered_ops() {
  std::lock_guard<std::mutex> lock(g_table_mutex);
  return table();
}

std::shared_ptr<const OpInfo> find_op(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_table_mutex);
  for (auto it = table().rbegin(); it != table().rend(); ++it)
    if ((*it)->name == name) return *it;
  return nullptr;
}

FusedBackwardGuard::FusedBackwardGuard(bool enabled) : prev_(t_fused_enabled) { t_fused_enabled = enabled; }
FusedBackwardGuard::~FusedBackwardGuard() { t_fused_enabled = prev_; }

namespace primitive_detail {

const char* intern(const std::string& name) {
  static std::set<std::string> names;  // std::set never moves its strings: c_str() stays valid
  std::lock_guard<std::mutex> lock(g_table_mutex);
  return names.insert(name).first->c_str();
}

void add_to_table(std::shared_ptr<const OpInfo> info) {
  std::lock_guard<std::mutex> lock(g_table_mutex);
  table().push_back(std::move(info));
}

bool fused_enabled() { return t_fused_enabled; }

void push_variant_override(const OpInfo* op, const std::string& variant) { t_overrides.push_back({op, variant}); }
void pop_variant_override() { t_overrides.pop_back(); }

const std::string* variant_override(const OpInfo* op) {
  for (auto it = t_overrides.rbegin(); it != t_overrides.rend(); ++it)
    if (it->op == op) return &it->variant;
  return nullptr;
}

Device device_of(const OpInfo& op, const Args& args) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined()) continue;
    if (!first) {
      first = &args[i];
      continue;
    }
    EMBER_CHECK(args[i].device() == first->device(), op.label, ": input ", i, " is on ", args[i].device(),
                " but the others are on ", first->device(), " (move them with .to(device))");
  }
  return first ? first->device() : Device::CPU;
}

void no_kernel(const OpInfo& op, Device d) {
  std::string has;
  for (Device e : {Device::CPU, Device::CUDA})
    if (op.kernel[size_t(e)]) has += (has.empty() ? "" : ", ") + std::string(name(e));
  throw Error(str(op.label, ": no ", name(d), " kernel was given", d == Device::CUDA && op.builtin ? " in this build" : "",
                  " (it runs on: ", has.empty() ? "no device" : has, ")"));
}

void no_variant(const OpInfo& op, Device d, const std::string& variant) {
  std::string has;
  for (const auto& [dev, v] : op.variants)
    if (dev == d) has += (has.empty() ? "" : ", ") + v;
  throw Error(str(op.label, ": variant '", variant, "' is not available on ", name(d), " in this build (it has: ",
                  has.empty() ? "none" : has, ")"));
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
