// ops/elementwise/unary_list.h: each line becomes a primitive of the op table, with a kernel on the
// CPU, both derivative rules, a spec in tests/op_table/ (so the table-driven suite checks it against
// float64 and by gradcheck), and a public function that computes the line's scalar formula.
// tests/python/test_ops.py checks the Python name of every primitive.
#include <algorithm>
#include <cmath>

#include "op_table/op_spec.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/op_list.h"
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

struct Line {
  const char* name;
  UnaryOp kind;
  Tensor (*fn)(const Tensor&);
};

std::vector<Line> lines() {
  return {
#define EMBER_LINE(K, name, ...) {#name, UnaryOp::K, &ember::name},
      EMBER_UNARY_OPS(EMBER_LINE)
#undef EMBER_LINE
  };
}

}  // namespace

TEST(UnaryList, EveryLineIsADifferentiablePrimitiveWithASpec) {
  builtin_ops();
  std::vector<Line> all = lines();
  EXPECT_GE(all.size(), 18u);
  for (const Line& l : all) {
    std::shared_ptr<const OpInfo> op = find_primitive(l.name);
    ASSERT_TRUE(op) << l.name << " is not in the op table";
    EXPECT_TRUE(op->kernel[size_t(Device::CPU)]) << l.name;
    EXPECT_TRUE(op->has_vjp && op->has_jvp) << l.name;
    EXPECT_TRUE(optable::find_spec(l.name)) << l.name << " has no spec in tests/op_table/specs_elementwise.cpp";
  }
}

TEST(UnaryList, ThePublicFunctionComputesTheLinesFormula) {
  Tensor x = uniform({37}, 0.1, 3.0, DType::Float64);  // inside every line's domain (log, sqrt)
  std::vector<double> xs = x.to_vector<double>();
  for (const Line& l : lines()) {
    std::vector<double> got = l.fn(x).to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = apply_unary(l.kind, xs[i]);
      EXPECT_NEAR(got[i], want, 1e-15 * std::max(1.0, std::abs(want))) << l.name << " at x = " << xs[i];
    }
  }
}
