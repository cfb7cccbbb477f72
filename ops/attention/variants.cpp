// attention's CPU variants by name: the kernels a program registers (forward and backward, which
// the backward of a recorded call looks up by the name in its options), the names the op table
// lists, and parsing a name. The op table owns the list and dispatch (framework/core/autograd/op_table.h).
#include <map>
#include <mutex>

#include "ops/attention/attention.h"
#include "ops/attention/attention_internal.h"

namespace ember {

namespace attention_detail {
namespace {

// The registered CPU variants' kernels by name. Guarded because a program may register while
// another thread asks for a kernel by name; entries are never removed, so a reference stays valid.
struct CpuVariants {
  std::mutex mutex;
  std::map<std::string, AttentionKernels> kernels;
};
CpuVariants& cpu_variants() {
  static CpuVariants v;
  return v;
}

}  // namespace

bool is_default(const std::string& impl) { return is_default_variant(impl); }

const AttentionKernels& cpu_kernels(const std::string& impl) {
  {
    std::lock_guard<std::mutex> lock(cpu_variants().mutex);
    auto it = cpu_variants().kernels.find(impl);
    if (it != cpu_variants().kernels.end()) return it->second;
  }
  parse_attention_impl(impl, Device::CPU);  // throws, naming what is registered
  throw Error(str("attention: no CPU kernel '", impl, "'"));
}

void check_impl(const AttentionOptions& opt, Device d) {
  if (is_default(opt.impl) || attention_op().info().has_variant(d, opt.impl)) return;
  parse_attention_impl(opt.impl, d);  // throws, naming what is registered
}

}  // namespace attention_detail

using namespace attention_detail;

std::vector<std::string> attention_variants(Device d) { return attention_op().info().variants(d); }

std::string parse_attention_impl(const std::string& s, Device d) {
  return parse_variant(attention_op().info(), s, d,
                       d == Device::CPU ? "; a study's kernels join when its program calls their registration, e.g. "
                                          "attention_study::register_attention_study_kernels() of examples/attention "
                                          "(ember.register_study_kernels() in Python)"
                                        : "");
}

void register_attention_variant(const std::string& name, AttentionKernels kernels) {
  EMBER_CHECK(bool(kernels.forward), "register_attention_variant: the forward kernel of '", name, "' is empty");
  EMBER_CHECK(bool(kernels.backward), "register_attention_variant: the backward kernel of '", name, "' is empty");
  AttentionOp& op = attention_op();
  // Held across both steps, so that no backward finds the name in the op table but not its kernels.
  std::lock_guard<std::mutex> lock(cpu_variants().mutex);
  op.variant(Device::CPU, name, variant_kernel(name));  // refuses a reserved or taken name
  cpu_variants().kernels.emplace(name, std::move(kernels));
}

}  // namespace ember
