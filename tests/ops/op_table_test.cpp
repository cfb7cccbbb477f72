// The op table suite: one parametrized test per check, instantiated for every built-in primitive
// (ember::builtin_ops()), driven by the specs in tests/op_table/. A primitive without a spec, or a
// spec without samples or error cases, fails OpTableCoverage.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "cuda_test_util.h"
#include "op_table/op_spec.h"
#include "study_kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::optable;

namespace {

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const auto& op : builtin_ops()) names.push_back(op->name);
  return names;
}

// |a - b| <= atol + rtol * |b| elementwise, a's dtype and device aside.
::testing::AssertionResult close(const Tensor& a, const Tensor& b, double atol, double rtol, const std::string& what) {
  if (!a.defined() || !b.defined())
    return ::testing::AssertionFailure() << what << ": " << (a.defined() ? "reference" : "result") << " undefined";
  if (a.shape() != b.shape())
    return ::testing::AssertionFailure() << what << ": shape " << to_string(a.shape()) << ", expected "
                                         << to_string(b.shape());
  std::vector<double> x = a.to(Device::CPU).to(DType::Float64).to_vector<double>();
  std::vector<double> y = b.to(Device::CPU).to(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    bool same_special = (std::isnan(x[i]) && std::isnan(y[i])) || (std::isinf(x[i]) && x[i] == y[i]);
    if (!same_special && !(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i])))
      return ::testing::AssertionFailure() << what << ": element " << i << " is " << x[i] << ", expected " << y[i]
                                           << " (atol " << atol << ", rtol " << rtol << ")";
  }
  return ::testing::AssertionSuccess();
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.to(DType::Float64).to_vector<double>()) m = std::max(m, std::abs(v));
  return m;
}

std::vector<size_t> differentiable(const Sample& s) {
  if (!s.differentiable.empty()) return s.differentiable;
  std::vector<size_t> d;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (s.inputs[i].defined() && is_floating(s.inputs[i].dtype())) d.push_back(i);
  return d;
}

// The sample as a function of its differentiable inputs only (the others held fixed).
Fn of_differentiable(const Sample& s, const std::vector<Tensor>& base) {
  std::vector<size_t> d = differentiable(s);
  return [s, base, d](const std::vector<Tensor>& xs) {
    std::vector<Tensor> all = base;
    for (size_t j = 0; j < d.size(); ++j) all[d[j]] = xs[j];
    return s.call(all);
  };
}

std::vector<Tensor> pick(const std::vector<Tensor>& xs, const std::vector<size_t>& idx) {
  std::vector<Tensor> out;
  for (size_t i : idx) out.push_back(xs[i]);
  return out;
}

// The cotangents of the differentiable inputs for output cotangent u, flattened and joined.
Tensor vjp_flat(const Fn& f, const std::vector<Tensor>& xs, const Tensor& u) {
  auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in)}; }, xs);
  std::vector<Tensor> parts;
  for (const Tensor& g : vjp({u})) parts.push_back(g.reshape({g.numel()}));
  return concat(parts, 0);
}

Tensor random_like(const Tensor& t, uint64_t seed) {
  Generator g(seed);
  return normal(t.shape(), 0.0, 1.0, t.dtype(), &g).to(t.device());
}

class OpTable : public ::testing::TestWithParam<std::string> {
 protected:
  const OpSpec& spec() const {
    const OpSpec* s = find_spec(GetParam());
    if (!s) throw Error("no spec for " + GetParam());
    return *s;
  }
  // The built-in primitive of that name: a custom op registered by another test may share it.
  const OpInfo& info() const {
    for (const auto& op : builtin_ops())
      if (op->name == GetParam()) return *op;
    return *find_primitive(GetParam());
  }
  bool has_dtype(DType d) const {
    return std::find(info().dtypes.begin(), info().dtypes.end(), d) != info().dtypes.end();
  }
};

TEST_P(OpTable, ForwardFloat64MatchesReference) {
  for (const Sample& s : spec().samples()) {
    SCOPED_TRACE(s.label);
    Tensor ref = s.reference(s.inputs);
    EXPECT_TRUE(close(s.call(s.inputs), ref, s.atol, s.rtol, "float64 forward"));
  }
}

TEST_P(OpTable, ForwardFloat32MatchesReference) {
  if (!has_dtype(DType::Float32)) GTEST_SKIP() << GetParam() << " declares no float32 kernel";
  for (const Sample& s : spec().samples()) {
    SCOPED_TRACE(s.label);
    Tensor ref = s.reference(s.inputs);
    Tensor y = s.call(to_dtype(s.inputs, DType::Float32));
    if (is_floating(ref.dtype())) EXPECT_EQ(y.dtype(), DType::Float32);
    double scale = 1 + max_abs(ref);
    EXPECT_TRUE(close(y, ref, spec().f32_atol * scale, spec().f32_rtol, "float32 forward"));
  }
}

// The 16-bit dtypes an op declares, against the float64 reference applied to the same rounded
// inputs: what is left is the op's own rounding (its output stored in 16 bits, float32 sums inside).
TEST_P(OpTable, ForwardHalfMatchesReference) {
  int checked = 0;
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    if (!has_dtype(dt)) continue;
    const double rtol = dt == DType::BFloat16 ? 1e-2 : 1e-3;  // 2^-8 and 2^-11 from one rounding, and some room
    for (const Sample& s : spec().samples()) {
      SCOPED_TRACE(s.label + " " + name(dt));
      std::vector<Tensor> in = to_dtype(s.inputs, dt);
      Tensor ref = s.reference(to_dtype(in, DType::Float64));
      Tensor y = s.call(in);
      if (is_floating(ref.dtype())) EXPECT_EQ(y.dtype(), dt);
      EXPECT_TRUE(close(y, ref, rtol * (1 + max_abs(ref)), rtol, std::string(name(dt)) + " forward"));
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << GetParam() << " declares no 16-bit dtype";
}

// An op that does not declare a 16-bit dtype refuses it by name, before any kernel runs.
TEST_P(OpTable, UndeclaredHalfIsRefusedByName) {
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    if (has_dtype(dt)) continue;
    for (const Sample& s : spec().samples()) {
      bool any_floating = false;
      for (const Tensor& x : s.inputs) any_floating = any_floating || (x.defined() && is_floating(x.dtype()));
      if (!any_floating) continue;
      SCOPED_TRACE(s.label + " " + name(dt));
      EXPECT_EMBER_ERROR(s.call(to_dtype(s.inputs, dt)), str("got ", name(dt), ", accepts float32, float64"));
      break;  // one sample per dtype says it
    }
  }
}

TEST_P(OpTable, GradcheckVjpJvpAndDotProduct) {
  if (!info().has_vjp) GTEST_SKIP() << GetParam() << " declares no VJP";
  int checked = 0;
  for (const Sample& s : spec().samples()) {
    if (!s.gradcheck || differentiable(s).empty()) continue;
    SCOPED_TRACE(s.label);
    GradcheckOptions o;
    o.eps = s.grad_eps;
    o.atol = spec().grad_atol;
    o.rtol = spec().grad_rtol;
    EXPECT_TRUE(ember::testing::grad_ok(of_differentiable(s, s.inputs), pick(s.inputs, differentiable(s)), o));
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no sample of " << GetParam() << " is gradient-checked";
}

TEST_P(OpTable, GradOfGrad) {
  if (!info().has_vjp) GTEST_SKIP() << GetParam() << " declares no VJP";
  int checked = 0;
  for (const Sample& s : spec().samples()) {
    if (!s.gradcheck || !s.second_order || differentiable(s).empty() || checked == 2) continue;
    SCOPED_TRACE(s.label);
    Fn f = of_differentiable(s, s.inputs);
    std::vector<Tensor> xs = pick(s.inputs, differentiable(s));
    Tensor u = random_like(f(xs), 77);
    GradcheckOptions o;
    o.eps = s.grad_eps;
    o.atol = spec().grad_atol;
    o.rtol = spec().grad_rtol;
    // Second derivatives: the VJP's own VJP and JVP, against differences of the VJP.
    EXPECT_TRUE(ember::testing::grad_ok([&](const std::vector<Tensor>& x) { return vjp_flat(f, x, u); }, xs, o));
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no sample of " << GetParam() << " asks for second order";
}

TEST_P(OpTable, FusedBackwardMatchesComposite) {
  if (!info().fused[size_t(Device::CPU)]) GTEST_SKIP() << GetParam() << " has no fused CPU backward";
  for (DType dt : {DType::Float64, DType::Float32}) {
    for (const Sample& s : spec().samples()) {
      if (!s.gradcheck || differentiable(s).empty()) continue;
      SCOPED_TRACE(s.label + (dt == DType::Float32 ? " float32" : " float64"));
      std::vector<Tensor> in = to_dtype(s.inputs, dt);
      Fn f = of_differentiable(s, in);
      std::vector<Tensor> xs = pick(in, differentiable(s));
      Tensor u = random_like(f(xs), 78);
      Tensor fused = vjp_flat(f, xs, u), composite;
      {
        FusedBackwardGuard off(false);
        composite = vjp_flat(f, xs, u);
      }
      double tol = dt == DType::Float32 ? 2e-5 * (1 + max_abs(composite)) : 1e-11 * (1 + max_abs(composite));
      EXPECT_TRUE(close(fused, composite, tol, 0, "fused against composite VJP"));
    }
  }
}

// Every variant registered when the test runs: the library's, and the studies' (examples/), which
// join by registration.
TEST_P(OpTable, EveryVariantMatchesTheDefault) {
  ember::testing::register_study_kernels();
  const std::vector<std::pair<Device, std::string>> variants = info().variants();
  if (variants.empty()) GTEST_SKIP() << GetParam() << " has one kernel per device";
  for (const auto& [device, variant] : variants) {
    if (device != Device::CPU) continue;  // CUDA variants: OpTable.CudaMatchesCpu and the GPU suite
    for (DType dt : {DType::Float32, DType::Float64}) {
      for (const Sample& s : spec().samples()) {
        SCOPED_TRACE(variant + " on " + s.label + (dt == DType::Float32 ? " float32" : " float64"));
        std::vector<Tensor> in = to_dtype(s.inputs, dt);
        Fn f = of_differentiable(s, in);
        std::vector<Tensor> xs = pick(in, differentiable(s));
        Tensor y = f(xs), u = random_like(y, 79);
        Tensor g = vjp_flat(f, xs, u);
        Tensor yv, gv;
        try {
          ScopedVariant use(GetParam(), variant);
          yv = f(xs);
          gv = vjp_flat(f, xs, u);
        } catch (const Error& e) {
          // A variant that serves one dtype only (OpenBLAS's sgemm) says so; anything else fails.
          std::string m = e.what();
          EXPECT_TRUE(dt == DType::Float64 && m.find("float32") != std::string::npos) << m;
          continue;
        }
        double scale = 1 + max_abs(y), gscale = 1 + max_abs(g);
        double tol = dt == DType::Float32 ? 3e-5 : 1e-10;
        EXPECT_TRUE(close(yv, y, tol * scale, 0, "variant forward"));
        EXPECT_TRUE(close(gv, g, tol * gscale, 0, "variant VJP"));
      }
    }
  }
}

// The default CUDA kernel and every CUDA variant registered (cuBLAS's and the studies'), each
// against the CPU's default.
TEST_P(OpTable, CudaMatchesCpu) {
  if (!info().kernel[size_t(Device::CUDA)]) GTEST_SKIP() << GetParam() << " has no CUDA kernel in this build";
  EMBER_SKIP_WITHOUT_GPU();
  ember::testing::register_study_kernels();
  std::vector<std::string> variants = {""};
  for (const auto& [device, v] : info().variants())
    if (device == Device::CUDA) variants.push_back(v);
  for (const std::string& variant : variants) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      for (const Sample& s : spec().samples()) {
        SCOPED_TRACE((variant.empty() ? std::string("default") : variant) + " on " + s.label +
                     (dt == DType::Float32 ? " float32" : " float64"));
        std::vector<Tensor> in = to_dtype(s.inputs, dt), gpu = to_device(in, Device::CUDA);
        Fn f = of_differentiable(s, in), fg = of_differentiable(s, gpu);
        std::vector<Tensor> xs = pick(in, differentiable(s)), xg = pick(gpu, differentiable(s));
        const bool grads = info().has_vjp && s.gradcheck && !xs.empty();
        Tensor y = f(xs), u = random_like(y, 80), g = grads ? vjp_flat(f, xs, u) : Tensor();
        Tensor yg, gg;
        try {
          std::unique_ptr<ScopedVariant> use;
          if (!variant.empty()) use = std::make_unique<ScopedVariant>(GetParam(), variant);
          yg = fg(xg);
          if (grads) gg = vjp_flat(fg, xg, u.to(Device::CUDA));
        } catch (const Error& e) {
          // A variant that serves float32 only (register_tiled, TF32) says so; anything else fails.
          std::string m = e.what();
          EXPECT_TRUE(!variant.empty() && dt == DType::Float64 && m.find("float32") != std::string::npos) << m;
          continue;
        }
        EXPECT_EQ(yg.device(), Device::CUDA);
        // TF32 keeps 10 mantissa bits of each operand.
        double tol = variant.find("tf32") != std::string::npos ? 2e-2 : dt == DType::Float32 ? 3e-5 : 1e-10;
        EXPECT_TRUE(close(yg, y, tol * (1 + max_abs(y)), 0, "CUDA forward"));
        if (grads) EXPECT_TRUE(close(gg, g, tol * (1 + max_abs(g)), 0, "CUDA VJP"));
      }
    }
  }
}

TEST_P(OpTable, DeclaredErrorsAreEmberErrors) {
  for (const ErrorCase& ec : spec().errors) {
    SCOPED_TRACE(ec.label);
    EXPECT_EMBER_ERROR(ec.run(), ec.expect);
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, OpTable, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(OpTableCoverage, EveryPrimitiveHasASpecWithSamplesAndErrors) {
  for (const auto& op : builtin_ops()) {
    const OpSpec* s = find_spec(op->name);
    if (!s) {
      ADD_FAILURE() << "primitive '" << op->name << "' has no spec in tests/op_table/";
      continue;
    }
    EXPECT_FALSE(s->samples().empty()) << op->name << " has no samples";
    EXPECT_FALSE(s->errors.empty()) << op->name << " declares no error case";
    EXPECT_TRUE(op->kernel[size_t(Device::CPU)]) << op->name << " has no CPU kernel";
  }
}

// The CUDA kernels are declared whether or not this build has the backend (they call hooks), so
// this runs without a GPU and says which ops OpTable.CudaMatchesCpu covers on one. A primitive left
// out here raises "no cuda kernel was given" on a CUDA tensor (framework/core/autograd/op_table.cpp).
TEST(OpTableCoverage, EveryPrimitiveButTheSparseOnesHasACudaKernel) {
  const std::set<std::string> cpu_only = {"spmm", "sampled_dot"};  // the pattern lives on the host
  for (const auto& op : builtin_ops())
    EXPECT_EQ(bool(op->kernel[size_t(Device::CUDA)]), cpu_only.count(op->name) == 0)
        << op->name << (cpu_only.count(op->name) ? " is listed as CPU-only but has a CUDA kernel"
                                                  : " has no CUDA kernel");
}

TEST(OpTableCoverage, EverySpecNamesAPrimitive) {
  for (const OpSpec& s : all_specs()) EXPECT_TRUE(find_primitive(s.op)) << "spec '" << s.op << "' names no primitive";
}

TEST(OpTableCoverage, SamplesAreRandomNotZeros) {
  for (const OpSpec& s : all_specs())
    for (const Sample& smp : s.samples())
      for (const Tensor& x : smp.inputs)
        if (x.defined() && is_floating(x.dtype()) && x.numel() > 0)
          EXPECT_GT(max_abs(x), 0) << s.op << " / " << smp.label << ": an all-zero input tests nothing";
}

}  // namespace

TEST(ScopedVariant, SelectsAVariantBeforeTheOpWasEverCalledAndRefusesUnknownOnes) {
  EXPECT_EMBER_ERROR(ScopedVariant("matmul", "no_such_kernel"), "matmul: variant 'no_such_kernel' is not available on any device (registered: auto, packed (cpu)");
  EXPECT_EMBER_ERROR(ScopedVariant("no_such_op", "naive"), "ScopedVariant: no primitive named 'no_such_op'");
  Tensor a = ember::testing::random({5, 7}, 1), b = ember::testing::random({7, 3}, 2);
  Tensor ref = matmul(a, b);
  ScopedVariant use("matmul", "packed");
  EXPECT_TRUE(close(matmul(a, b), ref, 1e-12, 0, "packed matmul"));
}
