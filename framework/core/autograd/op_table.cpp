#include "framework/core/autograd/op_table.h"

#include <mutex>
#include <set>

namespace ember {

namespace {
std::mutex g_table_mutex;
std::vector<std::shared_ptr<const OpInfo>>& table() {
  static std::vector<std::shared_ptr<const OpInfo>> ops;  // kept alive: recorded nodes point into them
  return ops;
}
struct Override {
  const OpInfo* op;
  std::string variant;
};
thread_local std::vector<Override> t_overrides;

const char* upper_name(Device d) { return d == Device::CPU ? "CPU" : "CUDA"; }

// "auto, a, b": what `d` has (the default first, as callers may name it too).
std::string registered_on(const OpInfo& op, Device d) {
  std::string known = "auto";
  for (const std::string& v : op.variants(d)) known += ", " + v;
  return known;
}
}  // namespace

std::vector<std::pair<Device, std::string>> OpInfo::variants() const {
  std::shared_lock<std::shared_mutex> lock(primitive_detail::variant_mutex());
  return variants_;
}

std::vector<std::string> OpInfo::variants(Device d) const {
  std::shared_lock<std::shared_mutex> lock(primitive_detail::variant_mutex());
  std::vector<std::string> names;
  for (const auto& [dev, v] : variants_)
    if (dev == d) names.push_back(v);
  return names;
}

bool OpInfo::has_variant(Device d, const std::string& v) const {
  std::shared_lock<std::shared_mutex> lock(primitive_detail::variant_mutex());
  return find_variant_locked(d, v) >= 0;
}

std::ptrdiff_t OpInfo::find_variant_locked(Device d, const std::string& v) const {
  for (size_t i = 0; i < variants_.size(); ++i)
    if (variants_[i].first == d && variants_[i].second == v) return std::ptrdiff_t(i);
  return -1;
}

void OpInfo::check_new_variant_locked(Device d, const std::string& v) const {
  EMBER_CHECK(!is_default_variant(v), label, ": variant name '", v,
              "' is reserved for the library's own kernel; give the variant a name of its own");
  EMBER_CHECK(find_variant_locked(d, v) < 0, label, " already has a ", upper_name(d), " variant '", v, "'");
}

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

std::string parse_variant(const OpInfo& op, const std::string& v, Device d, const std::string& hint) {
  if (is_default_variant(v) || op.has_variant(d, v)) return v;
  throw Error(str(op.label, ": variant '", v, "' is not available on ", d, " (registered: ", registered_on(op, d), ")",
                  hint));
}

std::string parse_variant_any_device(const OpInfo& op, const std::string& v) {
  std::string known = "auto";
  for (const auto& [dev, name] : op.variants()) {
    if (name == v) return v;
    known += ", " + name + " (" + ember::name(dev) + ")";
  }
  if (is_default_variant(v)) return v;
  throw Error(str(op.label, ": variant '", v, "' is not available on any device (registered: ", known, ")"));
}

const std::string* scoped_variant(const OpInfo& op, Device d) {
  const std::string* v = primitive_detail::variant_override(&op);
  return v && !is_default_variant(*v) && op.has_variant(d, *v) ? v : nullptr;
}

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

std::shared_mutex& variant_mutex() {
  static std::shared_mutex m;
  return m;
}

void push_variant_override(const OpInfo* op, const std::string& variant) { t_overrides.push_back({op, variant}); }
void pop_variant_override() { t_overrides.pop_back(); }

const std::string* variant_override(const OpInfo* op) {
  for (auto it = t_overrides.rbegin(); it != t_overrides.rend(); ++it)
    if (it->op == op) return &it->variant;
  return nullptr;
}

void no_kernel(const OpInfo& op, Device d) {
  std::string has;
  for (Device e : {Device::CPU, Device::CUDA})
    if (op.kernel[size_t(e)]) has += (has.empty() ? "" : ", ") + std::string(name(e));
  throw Error(str(op.label, ": no ", name(d), " kernel was given", d == Device::CUDA && op.builtin ? " in this build" : "",
                  " (it runs on: ", has.empty() ? "no device" : has, ")"));
}

}  // namespace primitive_detail
}  // namespace ember
