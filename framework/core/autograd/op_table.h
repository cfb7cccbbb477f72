// The op table: every primitive constructed in this process, enumerable at run time (bench_ops
// --list, the table-driven tests, the Python bindings), and the per-thread choice of a kernel
// variant. The engine in primitive.h registers each Primitive here when it is declared.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

// Type-erased facts about a primitive: one entry of the op table.
struct OpInfo {
  std::string name;
  std::string label;           // how messages name it: the name, or "custom op 'name'"
  const char* node_name = "";  // interned: trace nodes keep the pointer
  std::vector<DType> dtypes{DType::Float32, DType::Float64};
  std::array<bool, 2> kernel{};  // by Device: a default kernel exists
  std::array<bool, 2> fused{};   // by Device: a fused backward kernel exists
  bool has_vjp = false, has_jvp = false, builtin = true;
  std::vector<std::pair<Device, std::string>> variants;
  bool has_variant(Device d, const std::string& v) const;
};

// Every primitive constructed so far in this process (Ember's own once ops/op_list.h's
// builtin_ops() has run, and every CustomOp), in construction order.
std::vector<std::shared_ptr<const OpInfo>> registered_ops();
std::shared_ptr<const OpInfo> find_op(const std::string& name);  // nullptr when none

namespace primitive_detail {
const char* intern(const std::string& name);  // a pointer that stays valid: trace nodes keep it
void add_to_table(std::shared_ptr<const OpInfo> info);
const std::string* variant_override(const OpInfo* op);  // this thread's ScopedVariant, if any
void push_variant_override(const OpInfo* op, const std::string& variant);
void pop_variant_override();
[[noreturn]] void no_kernel(const OpInfo& op, Device d);
[[noreturn]] void no_variant(const OpInfo& op, Device d, const std::string& variant);
}  // namespace primitive_detail

}  // namespace ember
