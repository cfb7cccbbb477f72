// The op table: every primitive constructed in this process, enumerable at run time (bench_ops
// --list, the table-driven tests, the Python bindings), each primitive's named kernel variants,
// and the per-thread choice of a variant. The engine in primitive.h registers each Primitive here
// when it is declared, and each variant when Primitive::variant adds it (at declaration or later).
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <shared_mutex>
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
  // The floating dtypes the kernels accept; the engine refuses any other floating input by name.
  std::vector<DType> dtypes{DType::Float32, DType::Float64};
  std::array<bool, 2> kernel{};  // by Device: a default kernel exists
  std::array<bool, 2> fused{};   // by Device: a fused backward kernel exists
  bool has_vjp = false, has_jvp = false, builtin = true;

  // The named variants in registration order. Copies: another thread may register one meanwhile.
  std::vector<std::pair<Device, std::string>> variants() const;
  std::vector<std::string> variants(Device d) const;
  bool has_variant(Device d, const std::string& v) const;

 protected:
  // Written only under primitive_detail::variant_mutex() held exclusively, read under it shared.
  std::vector<std::pair<Device, std::string>> variants_;
  // Its index in variants_, or -1; with the mutex held.
  std::ptrdiff_t find_variant_locked(Device d, const std::string& v) const;
  // ember::Error for a reserved name or one that d already has; with the mutex held exclusively.
  void check_new_variant_locked(Device d, const std::string& v) const;
};

// Every primitive constructed so far in this process (Ember's own once ops/op_list.h's
// builtin_ops() has run, and every CustomOp), in construction order.
std::vector<std::shared_ptr<const OpInfo>> registered_ops();
std::shared_ptr<const OpInfo> find_op(const std::string& name);  // nullptr when none

// "" and "auto" name the default kernel, not a variant.
inline bool is_default_variant(const std::string& v) { return v.empty() || v == "auto"; }

// `v` if it names the default kernel or a variant of `op` registered for `d`; otherwise an
// ember::Error that lists what `d` has, followed by `hint` (e.g. how a study's kernels join).
std::string parse_variant(const OpInfo& op, const std::string& v, Device d, const std::string& hint = "");
// As parse_variant, for a variant on any device (ScopedVariant's check, ops/op_list.h).
std::string parse_variant_any_device(const OpInfo& op, const std::string& v);

// The variant this thread's innermost ScopedVariant (ops/op_list.h) for `op` names, if `op` has it
// on `d`; nullptr otherwise (no scope, or a scope naming the default or another device's variant).
const std::string* scoped_variant(const OpInfo& op, Device d);

namespace primitive_detail {
const char* intern(const std::string& name);  // a pointer that stays valid: trace nodes keep it
void add_to_table(std::shared_ptr<const OpInfo> info);
// Exclusive while a variant is registered, shared while one is looked up. The default kernel
// needs no lock: dispatch takes it only under a ScopedVariant for the op being applied.
std::shared_mutex& variant_mutex();
// This thread's stack of ScopedVariants: the innermost one for op wins.
void push_variant_override(const OpInfo* op, const std::string& variant);
void pop_variant_override();
const std::string* variant_override(const OpInfo* op);  // the innermost scope's name for op, if any
[[noreturn]] void no_kernel(const OpInfo& op, Device d);
}  // namespace primitive_detail

}  // namespace ember
