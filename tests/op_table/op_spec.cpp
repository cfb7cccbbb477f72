#include "op_table/op_spec.h"

namespace ember::optable {

const std::vector<OpSpec>& all_specs() {
  static const std::vector<OpSpec> specs = [] {
    std::vector<OpSpec> out;
    add_elementwise_specs(out);
    add_shape_specs(out);
    add_reduce_specs(out);
    add_matmul_specs(out);
    add_nn_specs(out);
    add_select_specs(out);
    add_index_specs(out);
    add_sparse_specs(out);
    add_attention_specs(out);
    add_conv_pool_norm_specs(out);
    return out;
  }();
  return specs;
}

const OpSpec* find_spec(const std::string& op) {
  for (const OpSpec& s : all_specs())
    if (s.op == op) return &s;
  return nullptr;
}

Sample make_sample(const std::string& label, std::vector<Tensor> inputs, Fn call, Fn reference, double atol) {
  Sample s;
  s.label = label;
  s.inputs = std::move(inputs);
  s.call = std::move(call);
  s.reference = std::move(reference);
  s.atol = atol;
  return s;
}

Tensor rand64(const Shape& shape, uint64_t seed, bool positive) {
  Generator g(seed);
  return positive ? uniform(shape, 0.5, 2.0, DType::Float64, &g) : normal(shape, 0.0, 1.0, DType::Float64, &g);
}

Tensor transposed64(const Shape& shape, uint64_t seed, bool positive) {
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return rand64(s, seed, positive).transpose(-1, -2);
}

Tensor strided64(const Shape& shape, uint64_t seed, bool positive) {
  Shape s = shape;
  s.back() = 2 * s.back() + 1;
  return rand64(s, seed, positive).slice(-1, 1, s.back(), 2);
}

Tensor expanded64(const Shape& shape, uint64_t seed, bool positive) {
  Shape s = shape;
  s[0] = 1;
  return rand64(s, seed, positive).expand(shape);
}

void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
  if (numel(shape) == 0) return;
  Shape idx(shape.size(), 0);
  while (true) {
    f(idx);
    int64_t d = int64_t(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[size_t(d)] < shape[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
    if (d < 0) return;
  }
}

Tensor ref_tensor(const Shape& shape, const std::function<double(const Shape&)>& f) {
  Tensor out = zeros(shape, DType::Float64);
  for_each_index(shape, [&](const Shape& i) { out.set(i, f(i)); });
  return out;
}

Tensor ref_unary(const Tensor& x, const std::function<double(double)>& f) {
  return ref_tensor(x.shape(), [&](const Shape& i) { return f(x.at(i)); });
}

Shape ref_broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + a.size() < n ? 1 : a[i + a.size() - n];
    int64_t db = i + b.size() < n ? 1 : b[i + b.size() - n];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_index(const Shape& out, const Shape& in) {
  Shape idx(in.size());
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) idx[i] = in[i] == 1 ? 0 : out[lead + i];
  return idx;
}

Tensor ref_binary(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f) {
  Shape s = ref_broadcast(a.shape(), b.shape());
  return ref_tensor(s, [&](const Shape& i) {
    return f(a.at(broadcast_index(i, a.shape())), b.at(broadcast_index(i, b.shape())));
  });
}

std::vector<Tensor> to_dtype(const std::vector<Tensor>& xs, DType dtype) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(x.defined() && is_floating(x.dtype()) ? x.to(dtype) : x);
  return out;
}

std::vector<Tensor> to_device(const std::vector<Tensor>& xs, Device device) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(x.defined() ? x.to(device) : x);
  return out;
}

}  // namespace ember::optable
