// autodiff_trace: Baydin et al. (2018), Tables 2 and 3, read back from the graph Ember records for
// y = ln(x1) + x1*x2 - sin(x2): the forward primal trace, the forward tangent trace and the reverse
// adjoint trace (one backward pass gives both partial derivatives). The tables are built by
// examples/autodiff/evaluation_trace.cpp from the recorded nodes, not typed in.
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include <limits>

#include "ember.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/autodiff/evaluation_trace.h"

using namespace ember;
using study::TraceFormat;

namespace {
// The survey's running example, one primitive per statement: in `log(a) + a * b - sin(b)` C++ leaves
// the order of the three calls unspecified (GCC runs sin first), and the trace numbers primitives in
// the order they ran.
Tensor baydin_example(const std::vector<Tensor>& x) {
  Tensor v1 = log(x[0]);
  Tensor v2 = x[0] * x[1];
  Tensor v3 = sin(x[1]);
  Tensor v4 = v1 + v2;
  return v4 - v3;
}

nlohmann::json to_json(const study::EvaluationTrace& t) {
  nlohmann::json j;
  j["function"] = "y = ln(x1) + x1*x2 - sin(x2)";
  j["y"] = t.y;
  j["direction"] = t.direction;
  j["directional_derivative"] = t.y_tangent;
  j["gradient"] = t.gradient;
  for (const auto& v : t.vars)
    j["vars"].push_back({{"index", v.index}, {"op", v.op}, {"args", v.args}, {"value", v.value},
                         {"tangent", v.tangent}, {"adjoint", v.adjoint}});
  j["visit_order"] = t.visit_order;
  for (const auto& e : t.steps)
    j["adjoint_steps"].push_back({{"from", e.from}, {"to", e.to}, {"child_adjoint", e.child_adjoint},
                                  {"partial", e.partial}, {"contribution", e.contribution}, {"after", e.after}});
  return j;
}
}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("autodiff_trace",
                        "Baydin et al. (2018) Tables 2 and 3 for y = ln(x1) + x1*x2 - sin(x2), read back from the graph "
                        "Ember records: primal trace, forward tangent trace (make_jvp), reverse adjoint trace (make_vjp "
                        "and one backward pass).");
  opts.add_options()("x1", "value of x1", cxxopts::value<double>()->default_value("2"))(
      "x2", "value of x2", cxxopts::value<double>()->default_value("5"))(
      "wrt", "the input whose tangent is 1 in the forward trace (1 or 2)", cxxopts::value<int>()->default_value("1"))(
      "table", "which table to print: primal, tangent, adjoint or all",
      cxxopts::value<std::string>()->default_value("all"))(
      "latex", "print the tables as LaTeX tabular environments")("json", "write the traces as JSON to this path",
                                                                  cxxopts::value<std::string>())(
      "h,help", "show this help");
  try {
    auto args = cli::parse(opts, argc, argv);
    if (args.count("help")) {
      std::cout << opts.help() << "\n";
      return 0;
    }
    // Checked before anything runs: ln(x1) needs x1 > 0, and beyond 1e6 the tables' printed values
    // and sin(x2) lose the digits the traces are read for.
    const int wrt = cli::flag<int>(args, "wrt", 1, 2, "1 or 2");
    std::vector<double> x = {
        cli::flag<double>(args, "x1", std::numeric_limits<double>::min(), 1e6, "a positive number up to 1e6 (ln(x1) is taken)"),
        cli::flag<double>(args, "x2", -1e6, 1e6, "a number from -1e6 to 1e6")};
    if (args.count("json")) cli::output_path("--json", args["json"].as<std::string>());
    std::string which = args["table"].as<std::string>();
    EMBER_CHECK(which == "all" || which == "primal" || which == "tangent" || which == "adjoint",
                "--table must be primal, tangent, adjoint or all, got '", which, "'");
    std::vector<double> dir = {wrt == 1 ? 1.0 : 0.0, wrt == 2 ? 1.0 : 0.0};
    auto t = study::trace_evaluation(baydin_example, x, dir);
    if (args.count("json")) {
      bench::write_json(args["json"].as<std::string>(), to_json(t));
    }
    TraceFormat fmt = args.count("latex") ? TraceFormat::Latex : TraceFormat::Text;
    if (which != "all") {
      std::cout << (which == "primal"    ? study::primal_table(t, fmt)
                    : which == "tangent" ? study::tangent_table(t, fmt)
                                         : study::adjoint_table(t, fmt));
      return 0;
    }
    if (fmt == TraceFormat::Text)
      std::cout << "y = ln(x1) + x1*x2 - sin(x2) at (x1, x2) = (" << study::format_number(x[0]) << ", "
                << study::format_number(x[1]) << "), tangent x-dot = (" << dir[0] << ", " << dir[1] << ")\n\n";
    std::cout << study::primal_table(t, fmt) << "\n"
              << study::tangent_table(t, fmt) << "\n"
              << study::adjoint_table(t, fmt);
    if (fmt == TraceFormat::Text)
      std::cout << "\none forward pass (make_jvp): dy/dx" << wrt << " = " << study::format_number(t.y_tangent)
                << "\none backward pass (make_vjp): dy/dx1 = " << study::format_number(t.gradient[0])
                << ", dy/dx2 = " << study::format_number(t.gradient[1]) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "autodiff_trace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
