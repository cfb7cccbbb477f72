// Specs of the neural-network primitives: linear, the softmax family, layer_norm, cross_entropy,
// embedding and its backward, dropout.
#include <cmath>
#include <limits>

#include "op_table/op_spec.h"
#include "ops/dropout/keep_mask.h"

namespace ember::optable {
namespace {


// Applies row(values) -> values to every line of x along dim d.
Tensor ref_rows(const Tensor& x, int64_t d, const std::function<std::vector<double>(const std::vector<double>&)>& row,
                bool reduce = false, bool keepdim = true) {
  Shape lines = x.shape();
  int64_t n = lines[size_t(d)];
  lines[size_t(d)] = 1;
  Shape out_shape = x.shape();
  if (reduce) out_shape[size_t(d)] = 1;
  Tensor out = zeros(out_shape, DType::Float64);
  for_each_index(lines, [&](const Shape& base) {
    std::vector<double> vals(static_cast<size_t>(n), 0.0);
    Shape i = base;
    for (int64_t k = 0; k < n; ++k) {
      i[size_t(d)] = k;
      vals[size_t(k)] = x.at(i);
    }
    std::vector<double> r = row(vals);
    for (size_t k = 0; k < r.size(); ++k) {
      i[size_t(d)] = int64_t(k);
      out.set(i, r[k]);
    }
  });
  return reduce && !keepdim ? out.squeeze(d) : out;
}

std::vector<double> softmax_row(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity(), s = 0;
  for (double x : v) m = std::max(m, x);
  std::vector<double> r;
  for (double x : v) s += std::exp(x - m);
  for (double x : v) r.push_back(std::exp(x - m) / s);
  return r;
}
double logsumexp_row(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity(), s = 0;
  for (double x : v) m = std::max(m, x);
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

struct RowCase {
  Tensor x;
  int64_t dim;
};
std::vector<RowCase> row_cases() {
  return {{rand64({3, 7}, 101), -1}, {rand64({1}, 102), 0},     {mul(rand64({2, 33}, 103), scalar(5.0, DType::Float64)), 1},
          {rand64({4, 5}, 104), 0},  {transposed64({6, 5}, 105), -1}, {rand64({2, 3, 4}, 106), 1}};
}

void softmax_family(std::vector<OpSpec>& out) {
  OpSpec sm;
  sm.op = "softmax";
  sm.samples = [] {
    std::vector<Sample> v;
    for (const RowCase& c : row_cases())
      v.push_back(make_sample(to_string(c.x.shape()) + " dim " + std::to_string(c.dim), {c.x},
                       [c](const std::vector<Tensor>& a) { return softmax(a[0], c.dim); },
                       [c](const std::vector<Tensor>& a) {
                         return ref_rows(a[0], c.dim < 0 ? c.dim + a[0].dim() : c.dim, softmax_row);
                       }));
    return v;
  };
  sm.bench = [sm](int64_t n) {
    Sample s = sm.samples()[0];
    s.inputs = {rand64({n, n}, 107)};
    return s;
  };
  sm.errors = {{"an int64 input", [] { softmax(arange(3), 0); }, "softmax: expected a float32 or float64 tensor"},
               {"a dim out of range", [] { softmax(rand64({2, 3}, 1), 2); }, "softmax"}};
  out.push_back(sm);

  OpSpec lsm;
  lsm.op = "log_softmax";
  lsm.samples = [] {
    std::vector<Sample> v;
    for (const RowCase& c : row_cases())
      v.push_back(make_sample(to_string(c.x.shape()) + " dim " + std::to_string(c.dim), {c.x},
                       [c](const std::vector<Tensor>& a) { return log_softmax(a[0], c.dim); },
                       [c](const std::vector<Tensor>& a) {
                         return ref_rows(a[0], c.dim < 0 ? c.dim + a[0].dim() : c.dim, [](const std::vector<double>& r) {
                           double l = logsumexp_row(r);
                           std::vector<double> o;
                           for (double x : r) o.push_back(x - l);
                           return o;
                         });
                       }));
    return v;
  };
  lsm.bench = [lsm](int64_t n) {
    Sample s = lsm.samples()[0];
    s.inputs = {rand64({n, n}, 108)};
    return s;
  };
  lsm.errors = {{"an int64 input", [] { log_softmax(arange(3), 0); }, "log_softmax: expected a float32 or float64 tensor"}};
  out.push_back(lsm);

  OpSpec lse;
  lse.op = "logsumexp";
  lse.samples = [] {
    std::vector<Sample> v;
    bool keep = false;
    for (const RowCase& c : row_cases()) {
      keep = !keep;
      v.push_back(make_sample(to_string(c.x.shape()) + " dim " + std::to_string(c.dim) + (keep ? " keepdim" : ""), {c.x},
                       [c, keep](const std::vector<Tensor>& a) { return logsumexp(a[0], c.dim, keep); },
                       [c, keep](const std::vector<Tensor>& a) {
                         return ref_rows(
                             a[0], c.dim < 0 ? c.dim + a[0].dim() : c.dim,
                             [](const std::vector<double>& r) { return std::vector<double>{logsumexp_row(r)}; }, true,
                             keep);
                       }));
    }
    return v;
  };
  lse.errors = {{"an int64 input", [] { logsumexp(arange(3), 0); }, "logsumexp: expected a float32 or float64 tensor"}};
  out.push_back(lse);
}

void linear_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "linear";
  s.samples = [] {
    std::vector<Sample> v;
    struct C {
      Shape x;
      int64_t out_features;
      bool bias;
    };
    for (C c : {C{{4, 7}, 5, true}, C{{2, 3, 7}, 1, true}, C{{7}, 3, false}, C{{1, 33}, 17, true}}) {
      int64_t in = c.x.back();
      std::vector<Tensor> inputs{rand64(c.x, 111), rand64({c.out_features, in}, 112),
                                 c.bias ? rand64({c.out_features}, 113) : Tensor()};
      if (!c.bias) inputs.pop_back();
      v.push_back(make_sample(to_string(c.x) + " -> " + std::to_string(c.out_features) + (c.bias ? " with bias" : ""),
                       inputs,
                       [](const std::vector<Tensor>& a) { return linear(a[0], a[1], a.size() > 2 ? a[2] : Tensor()); },
                       [](const std::vector<Tensor>& a) {
                         Shape o = a[0].shape();
                         o.back() = a[1].size(0);
                         return ref_tensor(o, [&](const Shape& i) {
                           Shape xi = i;
                           double acc = a.size() > 2 ? a[2].at({i.back()}) : 0.0;
                           for (int64_t k = 0; k < a[1].size(1); ++k) {
                             xi.back() = k;
                             acc += a[0].at(xi) * a[1].at({i.back(), k});
                           }
                           return acc;
                         });
                       }));
    }
    return v;
  };
  s.errors = {{"in_features that differ", [] { linear(rand64({2, 3}, 1), rand64({4, 5}, 2)); },
               "linear: input of shape [2, 3] does not end in the weight's in_features 5"},
              {"a bias of the wrong size", [] { linear(rand64({2, 3}, 1), rand64({4, 3}, 2), rand64({3}, 3)); },
               "linear: bias must have shape (4)"},
              {"a 3-d input whose last dim is not in_features", [] { linear(rand64({2, 0, 0}, 1), rand64({0, 3}, 2)); },
               "linear: input of shape [2, 0, 0] does not end in the weight's in_features 3"}};
  out.push_back(s);
}

void layer_norm_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "layer_norm";
  s.samples = [] {
    std::vector<Sample> v;
    struct C {
      Shape x;
      bool weight, bias;
    };
    for (C c : {C{{3, 7}, true, true}, C{{2, 3, 5}, true, false}, C{{4, 33}, false, false}, C{{1, 2}, true, true}}) {
      int64_t d = c.x.back();
      std::vector<Tensor> in = {rand64(c.x, 121), c.weight ? rand64({d}, 122) : Tensor(), c.bias ? rand64({d}, 123) : Tensor()};
      v.push_back(make_sample(to_string(c.x) + (c.weight ? " weight" : "") + (c.bias ? " bias" : ""), in,
                       [](const std::vector<Tensor>& a) { return layer_norm(a[0], a[1], a[2], 1e-5); },
                       [](const std::vector<Tensor>& a) {
                         Tensor y = ref_rows(a[0], a[0].dim() - 1, [](const std::vector<double>& r) {
                           double m = 0, var = 0;
                           for (double x : r) m += x / double(r.size());
                           for (double x : r) var += (x - m) * (x - m) / double(r.size());
                           std::vector<double> o;
                           for (double x : r) o.push_back((x - m) / std::sqrt(var + 1e-5));
                           return o;
                         });
                         return ref_tensor(y.shape(), [&](const Shape& i) {
                           double w = a[1].defined() ? a[1].at({i.back()}) : 1.0, b = a[2].defined() ? a[2].at({i.back()}) : 0.0;
                           return y.at(i) * w + b;
                         });
                       },
                       1e-9));
    }
    // Two rows of length 2 normalise to +-1, where a float64 finite difference is still fine.
    return v;
  };
  s.bench = [s](int64_t n) {
    Sample smp = s.samples()[0];
    smp.inputs = {rand64({n, n}, 124), rand64({n}, 125), rand64({n}, 126)};
    return smp;
  };
  s.f32_atol = 1e-4;
  s.errors = {{"a weight of the wrong size", [] { layer_norm(rand64({2, 3}, 1), rand64({4}, 2), Tensor(), 1e-5); },
               "layer_norm: weight has shape [4]"},
              {"negative eps", [] { layer_norm(rand64({2, 3}, 1), Tensor(), Tensor(), -1); }, "layer_norm: eps must be >= 0"}};
  out.push_back(s);
}

void cross_entropy_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "cross_entropy";
  s.samples = [] {
    std::vector<Sample> v;
    for (auto [shape, seed] : {std::pair<Shape, uint64_t>{{4, 7}, 131}, {{1, 3}, 132}, {{2, 3, 5}, 133}, {{33, 10}, 134}}) {
      Shape lead(shape.begin(), shape.end() - 1);
      Generator g(seed);
      Tensor targets = randint(lead, 0, shape.back(), &g);
      Sample smp = make_sample(to_string(shape), {rand64(shape, seed), targets},
                        [](const std::vector<Tensor>& a) { return cross_entropy(a[0], a[1]); },
                        [](const std::vector<Tensor>& a) {
                          Shape lines = a[0].shape();
                          lines.back() = 1;
                          double total = 0;
                          int64_t count = 0;
                          for_each_index(a[1].shape(), [&](const Shape& i) {
                            std::vector<double> row;
                            Shape j = i;
                            j.push_back(0);
                            for (int64_t k = 0; k < a[0].size(-1); ++k) {
                              j.back() = k;
                              row.push_back(a[0].at(j));
                            }
                            total += logsumexp_row(row) - row[size_t(a[1].at(i))];
                            ++count;
                          });
                          return scalar(total / double(count), DType::Float64);
                        });
      smp.differentiable = {0};
      v.push_back(smp);
    }
    return v;
  };
  s.errors = {{"float targets", [] { cross_entropy(rand64({2, 3}, 1), rand64({2}, 2)); }, "cross_entropy: targets must be int64"},
              {"targets of the wrong shape", [] { cross_entropy(rand64({2, 3}, 1), arange(3)); },
               "cross_entropy: logits [2, 3] need targets of shape [2]"},
              {"a target out of range", [] { cross_entropy(rand64({2, 3}, 1), from_vector(std::vector<int64_t>{0, 3})); },
               "cross_entropy"}};
  out.push_back(s);
}

void embedding_specs(std::vector<OpSpec>& out) {
  auto ids_of = [](const Shape& shape, int64_t v, uint64_t seed) {
    Generator g(seed);
    return randint(shape, 0, v, &g);
  };
  OpSpec e;
  e.op = "embedding";
  e.samples = [ids_of] {
    std::vector<Sample> v;
    for (auto [ids_shape, vocab, d] : {std::tuple<Shape, int64_t, int64_t>{{5}, 7, 3}, {{2, 3}, 4, 33}, {{}, 3, 2}, {{9}, 1, 1}}) {
      Sample smp = make_sample(to_string(ids_shape) + " ids into " + std::to_string(vocab) + " x " + std::to_string(d),
                        {rand64({vocab, d}, 141), ids_of(ids_shape, vocab, 142)},
                        [](const std::vector<Tensor>& a) { return embedding(a[0], a[1]); },
                        [](const std::vector<Tensor>& a) {
                          Shape o = a[1].shape();
                          o.push_back(a[0].size(1));
                          return ref_tensor(o, [&](const Shape& i) {
                            Shape id(i.begin(), i.end() - 1);
                            return a[0].at({int64_t(a[1].at(id)), i.back()});
                          });
                        },
                        0);
      smp.differentiable = {0};
      v.push_back(smp);
    }
    return v;
  };
  e.errors = {{"an id out of range", [] { embedding(rand64({3, 2}, 1), from_vector(std::vector<int64_t>{0, 3})); }, "embedding"},
              {"float ids", [] { embedding(rand64({3, 2}, 1), rand64({2}, 2)); }, "embedding: ids must be int64"},
              {"a 1-d table", [] { embedding(rand64({3}, 1), arange(2)); }, "embedding: weight must be a 2-d float tensor"}};
  out.push_back(e);

  OpSpec b;
  b.op = "embedding_backward";
  b.samples = [ids_of] {
    std::vector<Sample> v;
    for (auto [ids_shape, vocab, d] : {std::tuple<Shape, int64_t, int64_t>{{5}, 7, 3}, {{2, 3}, 2, 4}, {{9}, 1, 1}}) {
      Shape gs = ids_shape;
      gs.push_back(d);
      Sample smp = make_sample(to_string(ids_shape) + " ids, " + std::to_string(vocab) + " rows (repeats add)",
                        {rand64(gs, 143), ids_of(ids_shape, vocab, 144)},
                        [vocab = vocab](const std::vector<Tensor>& a) { return embedding_backward(a[0], a[1], vocab); },
                        [vocab = vocab, d = d](const std::vector<Tensor>& a) {
                          Tensor o = zeros({vocab, d}, DType::Float64);
                          for_each_index(a[0].shape(), [&](const Shape& i) {
                            Shape id(i.begin(), i.end() - 1);
                            Shape oi = {int64_t(a[1].at(id)), i.back()};
                            o.set(oi, o.at(oi) + a[0].at(i));
                          });
                          return o;
                        },
                        1e-12);
      smp.differentiable = {0};
      v.push_back(smp);
    }
    return v;
  };
  b.errors = {{"g of the wrong shape", [] { embedding_backward(rand64({3}, 1), arange(2), 4); },
               "embedding_backward: g has shape [3] but ids of shape [2] need ids.shape + (D)"}};
  out.push_back(b);
}

void dropout_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "dropout";
  s.samples = [] {
    std::vector<Sample> v;
    for (auto [x, p] : {std::pair<Tensor, double>{rand64({4, 33}, 151), 0.3}, {transposed64({7, 5}, 152), 0.5},
                        {rand64({1}, 153), 0.1}}) {
      Sample smp = make_sample(to_string(x.shape()) + " p " + std::to_string(p), {x},
                        [p = p](const std::vector<Tensor>& a) {
                          Generator g(9);  // a fresh generator per call: the same mask every time
                          return dropout(a[0], p, true, &g);
                        },
                        [p = p](const std::vector<Tensor>& a) {
                          Generator g(9);
                          uint64_t seed = g.next_u64();
                          int64_t k = 0;
                          Tensor o = zeros(a[0].shape(), DType::Float64);
                          for_each_index(a[0].shape(), [&](const Shape& i) {
                            o.set(i, dropout_keep(seed, uint64_t(k++), p) ? a[0].at(i) / (1 - p) : 0.0);
                          });
                          return o;
                        },
                        1e-12);
      v.push_back(smp);
    }
    return v;
  };
  s.errors = {{"p = 1", [] { dropout(rand64({3}, 1), 1.0); }, "dropout: p must lie in [0, 1)"},
              {"an int64 input", [] { dropout(arange(3), 0.5); }, "dropout: expected a float32 or float64 input"}};
  out.push_back(s);
}

}  // namespace

void add_nn_specs(std::vector<OpSpec>& out) {
  linear_spec(out);
  softmax_family(out);
  layer_norm_spec(out);
  cross_entropy_spec(out);
  embedding_specs(out);
  dropout_spec(out);
}

}  // namespace ember::optable
