// Evaluation traces (Wengert lists) of a scalar function, read back from the graph that Ember
// records, in the notation of Baydin et al. (2018), "Automatic differentiation in machine learning:
// a survey", Tables 2 and 3: inputs are v_{1-n} .. v_0, each primitive's result is v_1 .. v_l in the
// order the program computed it; v-dot is a tangent (forward mode), v-bar an adjoint (reverse mode).
//
// A study tool, outside the library: it reads the graph through the engine's public observers.
// Every number comes from the framework: values as each node is recorded (ObserveRecording), tangents
// from Node::tangent (make_jvp), adjoints from the cotangents a backward pass sends along each edge
// (ObserveBackward) and local partials from each node's own VJP applied to a unit cotangent. Only
// the symbolic column ("ln v_{-1}") is notation, chosen per primitive name.
#pragma once
#include <string>
#include <vector>

#include "ember.h"

namespace ember::study {

// One variable v_i of the trace.
struct TraceVar {
  int index = 0;          // Baydin's subscript: 1-n .. 0 for inputs, 1 .. l for primitives
  std::string op;         // "input" or the primitive's name ("log", "mul", ...)
  std::vector<int> args;  // the subscripts of its arguments; kConstantArg for an untraced one
  double value = 0;       // v_i
  double tangent = 0;     // v-dot_i, along the direction given to trace_evaluation
  double adjoint = 0;     // v-bar_i = dy/dv_i, as the backward pass summed it
};
constexpr int kConstantArg = 1 << 30;

// One edge of the backward pass: the child v_from sends v-bar_from * dv_from/dv_to to v_to.
struct AdjointStep {
  int from = 0, to = 0;
  int arg = 0;              // which argument of v_from v_to is
  double child_adjoint = 0; // v-bar_from, complete when the pass visits v_from
  double partial = 0;       // dv_from/dv_to, from v_from's VJP with a unit cotangent
  double contribution = 0;  // what the backward pass sent along this edge
  double before = 0;        // v-bar_to before this edge (0 for its first)
  double after = 0;         // v-bar_to after it
  bool first = true;        // the first edge that reaches v_to
};

struct EvaluationTrace {
  int num_inputs = 0;
  std::vector<TraceVar> vars;       // inputs first, then primitives in program order
  std::vector<int> visit_order;     // subscripts in the order the backward pass visited them
  std::vector<AdjointStep> steps;   // edges in the order the backward pass pushed them
  std::vector<double> direction;    // the tangent given to the inputs (x-dot)
  double y = 0, y_tangent = 0;
  std::vector<double> gradient;     // dy/dx_i, as the VjpFunction returned it
  const TraceVar& var(int index) const { return vars.at(size_t(index + num_inputs - 1)); }
};

// Runs f at x twice: once under make_jvp with tangent `direction` and once under make_vjp followed
// by one backward pass with y-bar = 1, recording values, and reads both graphs back. f must return
// a one-element tensor and every traced intermediate must have one element. Inputs are float64.
EvaluationTrace trace_evaluation(const FnN& f, const std::vector<double>& x, const std::vector<double>& direction);

enum class TraceFormat { Text, Latex };
// The three tables: the forward primal trace, the forward tangent trace and the reverse adjoint
// trace (in visit order). Text is aligned plain text; Latex is a tabular environment.
std::string primal_table(const EvaluationTrace& t, TraceFormat format);
std::string tangent_table(const EvaluationTrace& t, TraceFormat format);
std::string adjoint_table(const EvaluationTrace& t, TraceFormat format);
// Baydin's rounding: three decimals, trailing zeros dropped ("2", "0.5", "11.652").
std::string format_number(double v);

}  // namespace ember::study
