// bench_ops --list and --op NAME: the op table printed, and any primitive timed from its spec's
// sample (tests/op_table/), so every op has a benchmark without one being written for it.
#include <iostream>

#include "examples/common/bench.h"
#include "examples/matmul/bench_ops_table.h"
#include "op_table/op_spec.h"

namespace ember {

namespace {
std::string devices(const OpInfo& op, const std::array<bool, 2>& has) {
  std::string s;
  for (Device d : {Device::CPU, Device::CUDA})
    if (has[size_t(d)]) s += (s.empty() ? "" : ",") + std::string(name(d));
  return s.empty() ? "-" : s;
}
std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
}  // namespace

void print_op_table(std::ostream& os) {
  os << pad("op", 20) << pad("devices", 10) << pad("dtypes", 24) << pad("vjp", 5) << pad("jvp", 5)
     << pad("fused bwd", 11) << "variants\n";
  for (const auto& op : builtin_ops()) {
    std::string dts, vars;
    for (DType d : op->dtypes) dts += (dts.empty() ? "" : ",") + std::string(name(d));
    for (const auto& [dev, v] : op->variants()) vars += (vars.empty() ? "" : " ") + v + "(" + name(dev) + ")";
    os << pad(op->name, 20) << pad(devices(*op, op->kernel), 10) << pad(dts, 24) << pad(op->has_vjp ? "yes" : "-", 5)
       << pad(op->has_jvp ? "yes" : "T", 5) << pad(devices(*op, op->fused), 11) << (vars.empty() ? "-" : vars) << "\n";
  }
  os << "(jvp T: forward mode transposes the VJP; fused bwd: devices with a one-pass backward kernel)\n";
}

nlohmann::json bench_table_op(const std::string& op, int64_t n, DType dtype, const bench::Options& timing) {
  const optable::OpSpec* spec = optable::find_spec(op);
  EMBER_CHECK(find_primitive(op) && spec, "bench_ops --op: no primitive named '", op, "' (bench_ops --list shows them)");
  optable::Sample s = spec->bench ? spec->bench(n) : spec->samples().back();
  std::vector<Tensor> in = optable::to_dtype(s.inputs, dtype);
  std::vector<Tensor> diff;
  std::vector<size_t> idx;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].defined() && is_floating(in[i].dtype()) &&
        (s.differentiable.empty() || std::find(s.differentiable.begin(), s.differentiable.end(), i) != s.differentiable.end())) {
      idx.push_back(i);
      diff.push_back(in[i]);
    }
  auto f = [&](const std::vector<Tensor>& xs) {
    std::vector<Tensor> all = in;
    for (size_t j = 0; j < idx.size(); ++j) all[idx[j]] = xs[j];
    return std::vector<Tensor>{s.call(all)};
  };
  Tensor y = f(diff)[0];
  Generator g(3);
  Tensor u = normal(y.shape(), 0, 1, y.dtype(), &g);
  bench::Timing fwd = bench::measure([&] { f(diff); }, timing);
  bench::Timing both = bench::measure(
      [&] {
        auto [ys, vjp] = make_vjp(f, diff);
        vjp({u});
      },
      timing);
  std::cout << pad(op, 20) << pad(s.label, 36) << bench::cell(fwd.median_s * 1e3, 12, 3)
            << bench::cell(both.median_s * 1e3, 16, 3) << "\n";
  return {{"op", op}, {"sample", s.label}, {"forward", bench::to_json(fwd)}, {"forward_backward", bench::to_json(both)}};
}

}  // namespace ember
