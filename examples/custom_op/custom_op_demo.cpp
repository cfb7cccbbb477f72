// custom_op_demo: the whole path of a user-defined primitive. Defines nothing itself: the op is
// examples/custom_op/softplus_op.h. Checks its forward against a float64 reference, its VJP and
// JVP with gradcheck (also on a transposed view, and second derivatives through grad of grad),
// then times the fused op against the same function built from seven Ember primitives.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/custom_op/softplus_op.h"

using namespace ember;
using softplus_example::softplus_fused;
using softplus_example::softplus_composite;

namespace {

struct Check {
  std::string name;
  bool ok;
  std::string measured;  // what was measured, or the tolerance that was met
  std::string detail;    // gradcheck's report of its worst element, shown on failure
  bool info = false;     // a measurement for comparison, not a pass/fail check
};

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

Check gradcheck_row(const std::string& name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                    const std::vector<Tensor>& xs) {
  GradcheckOptions opt;
  GradcheckResult r = gradcheck(f, xs, opt);
  return {name, r.ok, "within " + sci(opt.atol) + " + " + sci(opt.rtol) + " rel", r.message};
}

// Largest |a - ref| / |ref| over the elements.
double max_rel_error(const Tensor& a, const std::vector<double>& ref) {
  std::vector<double> v = a.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::abs(v[i] - ref[i]) / std::abs(ref[i]));
  return worst;
}

// log(1 + exp(x)) in float64 with glibc's log1p, independent of the kernel's formula.
double softplus_reference(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// Median wall time of fn in milliseconds over exactly `repeats` runs, after warm-up runs.
double median_ms(const std::function<void()>& fn, int warmup, int repeats) {
  return bench::measure(fn, {warmup, repeats, repeats, std::numeric_limits<double>::infinity()}).median_s * 1e3;
}


}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("custom_op_demo",
                           "A fused softplus written as one Ember custom op (examples/custom_op/softplus_op.h):\n"
                           "checks it with gradcheck, then times it against the composite of built-in ops.");
  options.add_options()("numel", "elements in the timed tensor", cxxopts::value<int64_t>()->default_value("1000000"))(
      "repeats", "timed repetitions (the median is reported)", cxxopts::value<int>()->default_value("21"))(
      "dtype", "float32 or float64 for the timing", cxxopts::value<std::string>()->default_value("float32"))(
      "json", "write the results to this JSON file", cxxopts::value<std::string>())("h,help", "show this help");
  cxxopts::ParseResult args;
  try {
    args = ember::cli::parse(options, argc, argv);
    // The results file is checked now: a missing folder fails before the run, not after it.
    if (args.count("json")) ember::cli::output_path("--json", args["json"].as<std::string>());
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n" << options.help() << "\n";
    return 2;
  }
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  int64_t n = 0;
  int repeats = 0;
  try {
    n = ember::cli::flag<int64_t>(args, "numel", 1, int64_t(1) << 34);
    repeats = ember::cli::flag<int>(args, "repeats", 1, 1000000);
  } catch (const ember::Error& e) {
    std::cerr << "custom_op_demo: " << e.what() << "\n";
    return 2;
  }
  const std::string dts = args["dtype"].as<std::string>();
  if (n <= 0 || (dts != "float32" && dts != "float64")) {
    std::cerr << "custom_op_demo: --numel must be positive and --dtype float32 or float64\n";
    return 2;
  }
  const DType dtype = dts == "float32" ? DType::Float32 : DType::Float64;

  // ---- correctness ----
  std::vector<Check> checks;
  Generator gen(2024);
  {
    Tensor x = normal({4097}, 0.0, 8.0, DType::Float64, &gen);
    std::vector<double> ref;
    for (double v : x.to_vector<double>()) ref.push_back(softplus_reference(v));
    double e64 = max_rel_error(softplus_fused(x), ref);
    checks.push_back({"float64 forward vs reference, 4097 values", e64 < 1e-14, "rel err " + sci(e64), ""});
    // float32 results against the float64 reference at the same (float32-rounded) inputs.
    auto ref_at = [](const Tensor& t) {
      std::vector<double> r;
      for (double v : t.to_vector<double>()) r.push_back(softplus_reference(v));
      return r;
    };
    Tensor x32 = x.to(DType::Float32);
    double e32 = max_rel_error(softplus_fused(x32), ref_at(x32));
    checks.push_back({"float32 forward vs reference", e32 < 3e-7, "rel err " + sci(e32), ""});
    // Where the composite loses digits: log(1 + t) for small t = exp(-|x|) rounds 1 + t first.
    Tensor neg = uniform({4097}, -30.0, -5.0, DType::Float32, &gen);
    double fused_neg = max_rel_error(softplus_fused(neg), ref_at(neg));
    double comp_neg = max_rel_error(softplus_composite(neg), ref_at(neg));
    checks.push_back({"float32, x in [-30, -5]: fused", fused_neg < 3e-7, "rel err " + sci(fused_neg), ""});
    checks.push_back({"float32, x in [-30, -5]: composite", true, "rel err " + sci(comp_neg), "", true});
  }
  auto f = [](const std::vector<Tensor>& a) { return softplus_fused(a[0]); };
  checks.push_back(gradcheck_row("gradcheck VJP+JVP+dot, [3, 4]", f, {normal({3, 4}, 0, 2, DType::Float64, &gen)}));
  checks.push_back(
      gradcheck_row("gradcheck, transposed view [4, 3]^T", f, {normal({4, 3}, 0, 2, DType::Float64, &gen).t()}));
  checks.push_back(gradcheck_row(
      "gradcheck of grad (second derivatives)",
      [](const std::vector<Tensor>& a) { return grad([](const Tensor& z) { return sum(softplus_fused(z) * z); })(a[0]); },
      {normal({2, 3}, 0, 2, DType::Float64, &gen)}));
  checks.push_back(gradcheck_row(
      "gradcheck in a model: sum(softplus(A B), 1)",
      [](const std::vector<Tensor>& a) { return sum(softplus_fused(matmul(a[0], a[1])), {1}); },
      {normal({2, 3}, 0, 1, DType::Float64, &gen), normal({3, 2}, 0, 1, DType::Float64, &gen)}));

  std::printf("Custom op 'softplus': correctness\n\n");
  std::printf("| %-48s | %-6s | %-30s |\n", "check", "result", "measured");
  std::printf("|%s|%s|%s|\n", std::string(50, '-').c_str(), std::string(8, '-').c_str(), std::string(32, '-').c_str());
  bool all_ok = true;
  for (const Check& c : checks) {
    std::printf("| %-48s | %-6s | %-30s |\n", c.name.c_str(), c.info ? "info" : c.ok ? "pass" : "FAIL", c.measured.c_str());
    if (!c.ok && !c.detail.empty()) std::printf("    %s\n", c.detail.c_str());
    all_ok = all_ok && c.ok;
  }

  // ---- timing: fused custom op vs the composite of built-in ops ----
  Tensor x = normal({n}, 0.0, 3.0, dtype, &gen);
  auto fwd_grad = [&](const std::function<Tensor(const Tensor&)>& fn) {
    return [&x, fn] { grad([&](const Tensor& z) { return sum(fn(z)); })(x); };
  };
  struct Row {
    std::string what;
    double fused, composite;
  };
  const int warmup = 3;
  std::vector<Row> rows = {
      {"forward", median_ms([&] { softplus_fused(x); }, warmup, repeats), median_ms([&] { softplus_composite(x); }, warmup, repeats)},
      {"forward + backward (grad of sum)", median_ms(fwd_grad(softplus_fused), warmup, repeats),
       median_ms(fwd_grad(softplus_composite), warmup, repeats)}};
  std::printf("\nTiming: %lld %s elements, median of %d runs after %d warm-up, %d thread(s), %s\n\n", (long long)n,
              dts.c_str(), repeats, warmup, num_threads(), ember::bench::cpu_name().c_str());
  std::printf("| %-34s | %-12s | %-16s | %-15s |\n", "pass", "fused (ms)", "composite (ms)", "composite/fused");
  std::printf("|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(14, '-').c_str(), std::string(18, '-').c_str(),
              std::string(17, '-').c_str());
  for (const Row& r : rows)
    std::printf("| %-34s | %12.3f | %16.3f | %14.2fx |\n", r.what.c_str(), r.fused, r.composite, r.composite / r.fused);

  if (args.count("json")) {
    nlohmann::json j;
    j["op"] = "softplus";
    j["cpu"] = ember::bench::cpu_name();
    j["threads"] = num_threads();
    for (const Check& c : checks) j["checks"].push_back({{"name", c.name}, {"ok", c.ok}, {"measured", c.measured}});
    j["timing"]["n"] = n;
    j["timing"]["dtype"] = dts;
    j["timing"]["repeats"] = repeats;
    for (const Row& r : rows)
      j["timing"]["rows"].push_back({{"pass", r.what}, {"fused_ms", r.fused}, {"composite_ms", r.composite}});
    try {
      bench::write_json(args["json"].as<std::string>(), j);
    } catch (const Error& e) {
      std::cerr << "custom_op_demo: " << e.what() << "\n";
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}
