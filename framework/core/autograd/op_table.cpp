#include "framework/core/autograd/op_table.h"

#include <mutex>
#include <set>

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

void no_variant(const OpInfo& op, Device d, const std::string& variant) {
  std::string has;
  for (const auto& [dev, v] : op.variants)
    if (dev == d) has += (has.empty() ? "" : ", ") + v;
  throw Error(str(op.label, ": variant '", variant, "' is not available on ", name(d), " in this build (it has: ",
                  has.empty() ? "none" : has, ")"));
}

}  // namespace primitive_detail
}  // namespace ember
