#include "examples/autodiff/evaluation_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ember::study {

using autograd::BackwardStep;
using autograd::Node;
using autograd::ObserveBackward;

namespace {

// The values and the creation order of every node recorded while alive (the engine reports each
// one to autograd::ObserveRecording): the order the program ran its primitives in.
class Recording {
 public:
  Recording()
      : observing_([this](const Node& n, const Tensor& value) {
          seen_[&n] = {next_++, value};
        }) {}
  uint64_t order(const Node& n) const { return at(n).first; }
  const Tensor& value(const Node& n) const { return at(n).second; }

 private:
  const std::pair<uint64_t, Tensor>& at(const Node& n) const {
    auto it = seen_.find(&n);
    EMBER_CHECK(it != seen_.end(), "trace_evaluation: '", n.op, "' was not recorded while the trace was observed");
    return it->second;
  }
  std::map<const Node*, std::pair<uint64_t, Tensor>> seen_;
  uint64_t next_ = 0;
  autograd::ObserveRecording observing_;
};

double item_of(const Tensor& t, const Node& node, const char* what) {
  EMBER_CHECK(t.defined(), "trace_evaluation: '", node.op, "' has no recorded ", what);
  EMBER_CHECK(t.numel() == 1, "trace_evaluation: '", node.op, "' produced a value of shape ", to_string(t.shape()),
              "; an evaluation trace lists scalars only");
  return t.item();
}

// A recorded graph laid out as Baydin numbers it: inputs v_{1-n}..v_0, primitives v_1..v_l in
// creation order, which is the order the program ran them.
struct Layout {
  std::vector<const Node*> ops;          // v_1 .. v_l
  std::map<const Node*, int> index_of;   // every node -> its subscript
};

Layout lay_out(const std::shared_ptr<Node>& out, int num_inputs, const Recording& rec) {
  Layout l;
  for (Node* n : autograd::toposort({out})) {
    if (n->is_leaf) l.index_of[n] = n->leaf_index + 1 - num_inputs;
    else l.ops.push_back(n);
  }
  std::sort(l.ops.begin(), l.ops.end(), [&rec](const Node* a, const Node* b) { return rec.order(*a) < rec.order(*b); });
  for (size_t i = 0; i < l.ops.size(); ++i) l.index_of[l.ops[i]] = int(i) + 1;
  return l;
}

std::vector<Tensor> float64_inputs(const std::vector<double>& x) {
  std::vector<Tensor> xs;
  for (double v : x) xs.push_back(scalar(v, DType::Float64));
  return xs;
}

// Runs f on boxed inputs, keeping the node that recorded its output.
FnNM capture_output(const FnN& f, std::shared_ptr<Node>& out) {
  return [&f, &out](const std::vector<Tensor>& in) {
    Tensor y = f(in);
    EMBER_CHECK(y.defined() && y.numel() == 1, "trace_evaluation: the function must return a one-element tensor");
    EMBER_CHECK(y.is_traced(), "trace_evaluation: the output does not depend on the inputs");
    out = y.impl()->node;
    return std::vector<Tensor>{y};
  };
}

}  // namespace

EvaluationTrace trace_evaluation(const FnN& f, const std::vector<double>& x, const std::vector<double>& direction) {
  EMBER_CHECK(!x.empty() && x.size() == direction.size(), "trace_evaluation: got ", x.size(), " inputs and ",
              direction.size(), " tangents; expected the same number, at least one");
  EvaluationTrace t;
  const int n = int(x.size());
  t.num_inputs = n;
  t.direction = direction;

  // Reverse mode: record, then one backward pass with y-bar = 1, observing each visit.
  std::shared_ptr<Node> out;
  Recording recorded;
  auto [ys, vjp] = make_vjp(capture_output(f, out), float64_inputs(x));
  t.y = ys[0].item();
  Layout rev = lay_out(out, n, recorded);
  for (int i = 0; i < n; ++i) t.vars.push_back({i + 1 - n, "input", {}, x[size_t(i)], direction[size_t(i)], 0});
  for (const Node* node : rev.ops) {
    TraceVar v;
    v.index = rev.index_of.at(node);
    v.op = node->op;
    for (const auto& p : node->parents) v.args.push_back(p ? rev.index_of.at(p.get()) : kConstantArg);
    v.value = item_of(recorded.value(*node), *node, "value");
    t.vars.push_back(v);
  }

  std::map<int, double> running;  // v-bar so far, per subscript
  auto observe = [&](const BackwardStep& s) {
    int from = rev.index_of.at(s.node);
    t.visit_order.push_back(from);
    t.vars[size_t(from + n - 1)].adjoint = item_of(s.cotangent, *s.node, "cotangent");
    for (size_t i = 0; i < s.to_parents.size(); ++i) {
      if (!s.to_parents[i].defined()) continue;
      AdjointStep e;
      e.from = from;
      e.to = rev.index_of.at(s.node->parents[i].get());
      e.arg = int(i);
      e.child_adjoint = s.cotangent.item();
      e.partial = s.node->vjp(ones(s.node->shape, s.node->dtype, s.node->device), *s.node)[i].item();
      e.contribution = s.to_parents[i].item();
      auto it = running.find(e.to);
      e.first = it == running.end();
      e.before = e.first ? 0.0 : it->second;
      e.after = e.before + e.contribution;
      running[e.to] = e.after;
      t.steps.push_back(e);
    }
  };
  {
    ObserveBackward observing(observe);
    for (const Tensor& g : vjp({scalar(1.0, DType::Float64)})) t.gradient.push_back(g.item());
  }

  // Forward mode: a second recording of the same program, carrying tangents.
  std::shared_ptr<Node> fout;
  Recording recorded_forward;
  auto [fys, tangents] = make_jvp(capture_output(f, fout), float64_inputs(x), float64_inputs(direction));
  t.y_tangent = tangents[0].item();
  Layout fwd = lay_out(fout, n, recorded_forward);
  EMBER_CHECK(fwd.ops.size() == rev.ops.size(), "trace_evaluation: the function recorded ", rev.ops.size(),
              " primitives under make_vjp but ", fwd.ops.size(), " under make_jvp; it must run the same program");
  for (size_t i = 0; i < fwd.ops.size(); ++i) {
    TraceVar& v = t.vars[size_t(n) + i];
    EMBER_CHECK(v.op == fwd.ops[i]->op, "trace_evaluation: primitive ", i + 1, " is '", v.op, "' under make_vjp but '",
                fwd.ops[i]->op, "' under make_jvp");
    v.tangent = item_of(fwd.ops[i]->tangent, *fwd.ops[i], "tangent");
  }
  return t;
}

// ---------------------------------------------------------------- formatting

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

namespace {

// Baydin's notation in one of two spellings.
struct Notation {
  TraceFormat f;
  bool latex() const { return f == TraceFormat::Latex; }
  std::string sub(int i) const { return latex() ? "_{" + std::to_string(i) + "}" : std::to_string(i); }
  std::string v(int i) const { return "v" + sub(i); }
  std::string vdot(int i) const { return (latex() ? "\\dot{v}" : "v\u0307") + sub(i); }
  std::string vbar(int i) const { return (latex() ? "\\bar{v}" : "v\u0304") + sub(i); }
  std::string x(int i) const { return "x" + sub(i); }
  std::string xdot(int i) const { return (latex() ? "\\dot{x}" : "x\u0307") + sub(i); }
  std::string xbar(int i) const { return (latex() ? "\\bar{x}" : "x\u0304") + sub(i); }
  std::string y() const { return "y"; }
  std::string ydot() const { return latex() ? "\\dot{y}" : "y\u0307"; }
  std::string ybar() const { return latex() ? "\\bar{y}" : "y\u0304"; }
  std::string times() const { return latex() ? " \\times " : " \u00d7 "; }
  std::string fn(const char* name, const std::string& a) const { return (latex() ? "\\" : "") + std::string(name) + " " + a; }
  std::string partial(int i, int j) const {
    return latex() ? "\\partial v" + sub(i) + "/\\partial v" + sub(j) : "\u2202v" + sub(i) + "/\u2202v" + sub(j);
  }
  // A number used as an operand: negative ones in parentheses so that "a - (-b)" reads right.
  std::string num(double d) const {
    std::string s = format_number(d);
    return s[0] == '-' ? "(" + s + ")" : s;
  }
};

// Per primitive: how its result, its tangent and its local partials are written, given its
// operands already spelled (as symbols or as numbers). Empty where Ember has no notation for it.
std::string primal_formula(const Notation& n, const std::string& op, const std::vector<std::string>& a) {
  if (a.size() == 2) {
    if (op == "add") return a[0] + " + " + a[1];
    if (op == "sub") return a[0] + " - " + a[1];
    if (op == "mul") return a[0] + n.times() + a[1];
    if (op == "div") return a[0] + " / " + a[1];
  }
  if (a.size() == 1) {
    if (op == "log") return n.fn("ln", a[0]);
    if (op == "sin" || op == "cos" || op == "exp" || op == "tanh") return n.fn(op.c_str(), a[0]);
    if (op == "neg") return "-" + a[0];
  }
  return "";
}

std::string tangent_formula(const Notation& n, const std::string& op, const std::vector<std::string>& a,
                            const std::vector<std::string>& ta) {
  if (a.size() == 2) {
    if (op == "add") return ta[0] + " + " + ta[1];
    if (op == "sub") return ta[0] + " - " + ta[1];
    if (op == "mul") return ta[0] + n.times() + a[1] + " + " + ta[1] + n.times() + a[0];
    if (op == "div") return "(" + ta[0] + n.times() + a[1] + " - " + ta[1] + n.times() + a[0] + ") / " + a[1] + "^2";
  }
  if (a.size() == 1) {
    if (op == "log") return ta[0] + " / " + a[0];
    if (op == "sin") return ta[0] + n.times() + n.fn("cos", a[0]);
    if (op == "cos") return "-" + ta[0] + n.times() + n.fn("sin", a[0]);
    if (op == "exp") return ta[0] + n.times() + n.fn("exp", a[0]);
    if (op == "neg") return "-" + ta[0];
  }
  return "";
}

std::string partial_formula(const Notation& n, const std::string& op, int arg, const std::vector<std::string>& a) {
  if (a.size() == 2) {
    if (op == "add") return "1";
    if (op == "sub") return arg == 0 ? "1" : "(-1)";
    if (op == "mul") return a[1 - arg];
    if (op == "div") return arg == 0 ? "1 / " + a[1] : "(-" + a[0] + " / " + a[1] + "^2)";
  }
  if (a.size() == 1) {
    if (op == "log") return "(1 / " + a[0] + ")";
    if (op == "sin") return n.fn("cos", a[0]);
    if (op == "cos") return "(-" + n.fn("sin", a[0]) + ")";
    if (op == "exp") return n.fn("exp", a[0]);
    if (op == "neg") return "(-1)";
  }
  return "";
}

// Terminal columns: combining marks (the dot and the bar) take no width.
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    bool combining = len == 2 && (c == 0xCC || (c == 0xCD && static_cast<unsigned char>(s[i + 1]) < 0xB0));
    if (!combining) ++w;
    i += len;
  }
  return w;
}

// Rows of "lhs = cell = cell ...": aligned text, or a LaTeX tabular with one column per cell.
std::string render(const Notation& n, const std::string& title, const std::vector<std::vector<std::string>>& rows) {
  size_t cols = 0;
  for (const auto& r : rows) cols = std::max(cols, r.size());
  std::ostringstream os;
  if (n.latex()) {
    os << "% " << title << "\n\\begin{tabular}{" << std::string(cols, 'l') << "}\n";
    for (const auto& r : rows) {
      for (size_t c = 0; c < cols; ++c) {
        if (c) os << " & ";
        if (c < r.size() && !r[c].empty()) os << "$" << (c ? "= " : "") << r[c] << "$";
      }
      os << " \\\\\n";
    }
    os << "\\end{tabular}\n";
    return os.str();
  }
  std::vector<size_t> width(cols, 0);
  for (const auto& r : rows)
    for (size_t c = 0; c + 1 < r.size(); ++c) width[c] = std::max(width[c], display_width(r[c]));
  os << title << "\n";
  for (const auto& r : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < r.size(); ++c) {
      // The last cell of a row is its value: right after the widest formulas of the columns before.
      bool last = c + 1 == r.size();
      if (c) line += r[c].empty() ? "   " : " = ";
      line += r[c];
      if (!last) line += std::string(width[c] - display_width(r[c]), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
  return os.str();
}

std::vector<std::string> operand_symbols(const Notation& n, const TraceVar& v, bool tangent) {
  std::vector<std::string> s;
  for (int a : v.args) s.push_back(a == kConstantArg ? "c" : tangent ? n.vdot(a) : n.v(a));
  return s;
}

std::vector<std::string> operand_numbers(const Notation& n, const EvaluationTrace& t, const TraceVar& v, bool tangent) {
  std::vector<std::string> s;
  for (int a : v.args) s.push_back(a == kConstantArg ? "c" : n.num(tangent ? t.var(a).tangent : t.var(a).value));
  return s;
}

std::string generic_call(const TraceVar& v, const std::vector<std::string>& a) {
  std::string s = v.op + "(";
  for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
  return s + ")";
}

}  // namespace

std::string primal_table(const EvaluationTrace& t, TraceFormat format) {
  Notation n{format};
  std::vector<std::vector<std::string>> rows;
  for (const TraceVar& v : t.vars) {
    if (v.op == "input") {
      rows.push_back({n.v(v.index), n.x(v.index + t.num_inputs), "", format_number(v.value)});
      continue;
    }
    std::string sym = primal_formula(n, v.op, operand_symbols(n, v, false));
    std::string num = primal_formula(n, v.op, operand_numbers(n, t, v, false));
    if (sym.empty()) sym = generic_call(v, operand_symbols(n, v, false));
    rows.push_back({n.v(v.index), sym, num, format_number(v.value)});
  }
  rows.push_back({n.y(), n.v(t.vars.back().index), "", format_number(t.y)});
  return render(n, "Forward primal trace", rows);
}

std::string tangent_table(const EvaluationTrace& t, TraceFormat format) {
  Notation n{format};
  std::vector<std::vector<std::string>> rows;
  for (const TraceVar& v : t.vars) {
    if (v.op == "input") {
      rows.push_back({n.vdot(v.index), n.xdot(v.index + t.num_inputs), "", format_number(v.tangent)});
      continue;
    }
    std::string sym = tangent_formula(n, v.op, operand_symbols(n, v, false), operand_symbols(n, v, true));
    std::string num = tangent_formula(n, v.op, operand_numbers(n, t, v, false), operand_numbers(n, t, v, true));
    if (sym.empty()) sym = "D" + generic_call(v, operand_symbols(n, v, false)) + "[" + n.vdot(v.args.at(0)) + ", ...]";
    rows.push_back({n.vdot(v.index), sym, num, format_number(v.tangent)});
  }
  rows.push_back({n.ydot(), n.vdot(t.vars.back().index), "", format_number(t.y_tangent)});
  return render(n, "Forward tangent trace", rows);
}

std::string adjoint_table(const EvaluationTrace& t, TraceFormat format) {
  Notation n{format};
  std::vector<std::vector<std::string>> rows;
  rows.push_back({n.vbar(t.vars.back().index), n.ybar(), "", "", "1"});
  for (const AdjointStep& e : t.steps) {
    const TraceVar& child = t.var(e.from);
    std::string keep = e.first ? "" : n.vbar(e.to) + " + ";
    std::string keep_num = e.first ? "" : format_number(e.before) + " + ";
    std::string partial = partial_formula(n, child.op, e.arg, operand_symbols(n, child, false));
    if (partial.empty()) partial = n.partial(e.from, e.to);
    rows.push_back({n.vbar(e.to), keep + n.vbar(e.from) + " " + n.partial(e.from, e.to),
                    keep + n.vbar(e.from) + n.times() + partial,
                    keep_num + n.num(e.child_adjoint) + n.times() + n.num(e.partial), format_number(e.after)});
  }
  for (int i = 0; i < t.num_inputs; ++i)
    rows.push_back({n.xbar(i + 1), n.vbar(i + 1 - t.num_inputs), "", "", format_number(t.gradient[size_t(i)])});
  std::string out = render(n, "Reverse adjoint trace (in the order the backward pass visits the nodes)", rows);
  std::string order;
  for (int i : t.visit_order) order += (order.empty() ? "" : ", ") + n.v(i);
  return out + (n.latex() ? "% visit order: " : "  visit order: ") + order + "\n";
}

}  // namespace ember::study
