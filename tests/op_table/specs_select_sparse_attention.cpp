// Specs of topk/sort, the scans, the sparse products and attention.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "op_table/op_spec.h"

namespace ember::optable {
namespace {


// The k largest (or smallest) of each last-dim row, in order: std::sort on the row, nothing shared
// with the kernels.
Tensor ref_select(const Tensor& x, int64_t k, bool largest) {
  Shape o = x.shape();
  o.back() = k;
  Shape rows = x.shape();
  rows.back() = 1;
  Tensor out = zeros(o, DType::Float64);
  for_each_index(rows, [&](const Shape& base) {
    std::vector<double> r;
    Shape i = base;
    for (int64_t j = 0; j < x.size(-1); ++j) {
      i.back() = j;
      r.push_back(x.at(i));
    }
    if (largest) std::sort(r.begin(), r.end(), std::greater<double>());
    else std::sort(r.begin(), r.end());
    for (int64_t j = 0; j < k; ++j) {
      i.back() = j;
      out.set(i, r[size_t(j)]);
    }
  });
  return out;
}

void select_specs(std::vector<OpSpec>& out) {
  OpSpec t;
  t.op = "topk";
  t.samples = [] {
    std::vector<Sample> v;
    for (auto [x, k, largest] : {std::tuple<Tensor, int64_t, bool>{rand64({3, 7}, 161), 3, true}, {rand64({33}, 162), 5, false},
                                 {transposed64({4, 6}, 163), 6, true}, {rand64({2, 3, 5}, 164), 1, true}, {rand64({1}, 165), 1, false}})
      v.push_back(make_sample(to_string(x.shape()) + " k " + std::to_string(k) + (largest ? " largest" : " smallest"), {x},
                       [k = k, largest = largest](const std::vector<Tensor>& a) { return topk(a[0], k, largest).values; },
                       [k = k, largest = largest](const std::vector<Tensor>& a) { return ref_select(a[0], k, largest); }, 0));
    return v;
  };
  t.errors = {{"k beyond the row", [] { topk(rand64({2, 3}, 1), 4); }, "topk: k = 4 is outside [0, 3]"}};
  out.push_back(t);

  OpSpec s;
  s.op = "sort";
  s.samples = [] {
    std::vector<Sample> v;
    for (auto [x, desc] : {std::pair<Tensor, bool>{rand64({3, 7}, 166), false}, {strided64({2, 9}, 167), true}, {rand64({5}, 168), false}})
      v.push_back(make_sample(to_string(x.shape()) + (desc ? " descending" : ""), {x},
                       [desc = desc](const std::vector<Tensor>& a) { return sort(a[0], desc).values; },
                       [desc = desc](const std::vector<Tensor>& a) { return ref_select(a[0], a[0].size(-1), desc); }, 0));
    return v;
  };
  s.errors = {{"a 0-d input", [] { sort(rand64({}, 1)); }, "sort"}};
  out.push_back(s);

  for (bool reverse : {false, true}) {
    OpSpec c;
    c.op = reverse ? "cumsum_reverse" : "cumsum";
    c.samples = [reverse] {
      std::vector<Sample> v;
      for (auto [x, dim] : {std::pair<Tensor, int64_t>{rand64({3, 7}, 171), 1}, {rand64({33}, 172), 0},
                            {transposed64({4, 5}, 173), 0}, {rand64({2, 3, 4}, 174), -2}}) {
        v.push_back(make_sample(to_string(x.shape()) + " dim " + std::to_string(dim), {x},
                         [dim = dim, reverse](const std::vector<Tensor>& a) {
                           return reverse ? cumsum_reverse(a[0], dim) : cumsum(a[0], dim);
                         },
                         [dim = dim, reverse](const std::vector<Tensor>& a) {
                           int64_t d = dim < 0 ? dim + a[0].dim() : dim;
                           return ref_tensor(a[0].shape(), [&](const Shape& i) {
                             double acc = 0;
                             Shape j = i;
                             int64_t n = a[0].size(d);
                             for (int64_t p = reverse ? i[size_t(d)] : 0; p < (reverse ? n : i[size_t(d)] + 1); ++p) {
                               j[size_t(d)] = p;
                               acc += a[0].at(j);
                             }
                             return acc;
                           });
                         },
                         1e-12));
      }
      return v;
    };
    c.errors = {{"a dim out of range", [reverse] { reverse ? cumsum_reverse(rand64({2}, 1), 1) : cumsum(rand64({2}, 1), 1); },
                 reverse ? "cumsum_reverse" : "cumsum"}};
    out.push_back(c);
  }
}

// A random pattern of about `density`, at least one entry, as a CSR tensor with float64 values.
CsrTensor random_csr(int64_t rows, int64_t cols, double density, uint64_t seed) {
  Generator g(seed);
  Tensor u = uniform({rows, cols}, 0.0, 1.0, DType::Float64, &g), vals = rand64({rows, cols}, seed + 1);
  Tensor dense = where(lt(u, scalar(density, DType::Float64)), vals, scalar(0.0, DType::Float64));
  dense.set({0, 0}, 1.5);
  return dense_to_csr(dense);
}

void sparse_specs(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "spmm";
  s.samples = [] {
    std::vector<Sample> v;
    struct C {
      int64_t m, k, n;
      double density;
      bool transpose;
    };
    for (C c : {C{7, 5, 3, 0.4, false}, C{1, 33, 2, 0.2, false}, C{6, 4, 1, 0.5, true}, C{5, 5, 7, 1.0, true}}) {
      CsrTensor a = random_csr(c.m, c.k, c.density, 181);
      auto pattern = a.pattern_ptr();
      Tensor b = rand64({c.transpose ? c.m : c.k, c.n}, 182);
      v.push_back(make_sample("[" + std::to_string(c.m) + ", " + std::to_string(c.k) + "] density " + std::to_string(c.density) +
                           (c.transpose ? " transposed" : "") + " @ " + to_string(b.shape()),
                       {a.values(), b},
                       [pattern, c](const std::vector<Tensor>& x) { return spmm(CsrTensor(pattern, x[0]), x[1], c.transpose); },
                       [pattern, c](const std::vector<Tensor>& x) {
                         Tensor dense = CsrTensor(pattern, x[0]).to_dense();
                         if (c.transpose) dense = dense.t().contiguous();
                         return ref_tensor({dense.size(0), x[1].size(1)}, [&](const Shape& i) {
                           double acc = 0;
                           for (int64_t p = 0; p < dense.size(1); ++p) acc += dense.at({i[0], p}) * x[1].at({p, i[1]});
                           return acc;
                         });
                       },
                       1e-12));
    }
    return v;
  };
  s.errors = {{"inner dims that differ", [] { spmm(random_csr(3, 4, 0.5, 1), rand64({3, 2}, 2)); }, "spmm: A of shape [3, 4]"},
              {"a dtype that differs", [] { spmm(random_csr(3, 4, 0.5, 1), rand64({4, 2}, 2).to(DType::Float32)); },
               "spmm: dtype mismatch"}};
  out.push_back(s);

  OpSpec d;
  d.op = "sampled_dot";
  d.samples = [] {
    std::vector<Sample> v;
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 3}, {1, 4, 33}, {6, 6, 1}}) {
      auto pattern = random_csr(m, n, 0.4, 191).pattern_ptr();
      v.push_back(make_sample("pattern [" + std::to_string(m) + ", " + std::to_string(n) + "], k " + std::to_string(k),
                       {rand64({m, k}, 192), rand64({n, k}, 193)},
                       [pattern](const std::vector<Tensor>& x) { return sampled_dot(pattern, x[0], x[1]); },
                       [pattern](const std::vector<Tensor>& x) {
                         Tensor o = zeros({pattern->nnz()}, DType::Float64);
                         for (int64_t r = 0; r < pattern->rows; ++r)
                           for (int64_t p = pattern->row_ptr[size_t(r)]; p < pattern->row_ptr[size_t(r) + 1]; ++p) {
                             double acc = 0;
                             for (int64_t j = 0; j < x[0].size(1); ++j)
                               acc += x[0].at({r, j}) * x[1].at({int64_t(pattern->col_idx[size_t(p)]), j});
                             o.set({p}, acc);
                           }
                         return o;
                       },
                       1e-12));
    }
    return v;
  };
  d.errors = {{"operands that do not fit the pattern",
               [] { sampled_dot(random_csr(3, 4, 0.5, 1).pattern_ptr(), rand64({3, 2}, 2), rand64({3, 2}, 3)); },
               "sampled_dot: for a pattern of shape [3, 4]"}};
  out.push_back(d);
}

// softmax(scale * q k^T, causal mask aligned bottom-right) v, by loops over flat float64 copies
// (one pass over the keys per query row, so that head sizes of 128 and a few hundred keys stay fast).
Tensor ref_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int64_t nq = q.size(-2), nk = k.size(-2), d = q.size(-1), heads = q.numel() / (nq * d);
  const double scale = 1 / std::sqrt(double(d));
  const std::vector<double> qv = q.contiguous().to_vector<double>(), kv = k.contiguous().to_vector<double>(),
                            vv = v.contiguous().to_vector<double>();
  std::vector<double> out(size_t(q.numel()));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < nq; ++i) {
      std::vector<double> s(size_t(nk), -std::numeric_limits<double>::infinity());
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < nk; ++j) {
        if (causal && j > i + (nk - nq)) continue;
        double acc = 0;
        for (int64_t c = 0; c < d; ++c) acc += qv[size_t((h * nq + i) * d + c)] * kv[size_t((h * nk + j) * d + c)];
        s[size_t(j)] = acc * scale;
        m = std::max(m, s[size_t(j)]);
      }
      double z = 0;
      for (int64_t j = 0; j < nk; ++j) z += std::exp(s[size_t(j)] - m);
      for (int64_t j = 0; j < nk; ++j) {
        const double p = std::exp(s[size_t(j)] - m) / z;
        for (int64_t c = 0; c < d; ++c) out[size_t((h * nq + i) * d + c)] += p * vv[size_t((h * nk + j) * d + c)];
      }
    }
  return ref_tensor(q.shape(), [&](const Shape& idx) {
    int64_t flat = 0;
    for (size_t a = 0; a < idx.size(); ++a) flat = flat * q.size(int64_t(a)) + idx[a];
    return out[size_t(flat)];
  });
}

void attention_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "attention";
  s.samples = [] {
    std::vector<Sample> v;
    struct C {
      Shape lead;
      int64_t nq, nk, d;
      bool causal;
    };
    // The first four are small enough to gradcheck; the rest have the shapes the production kernel
    // (Flash2) blocks awkwardly: N not a multiple of its query (96) and key (96, 256) blocks, d of
    // 64, 128 (two micro-kernel slivers) and odd, causal and not, several key blocks per query
    // block. They are checked against the float64 reference and every variant against the default
    // (forward and VJP, float32 and float64); tests/ops/attention/ adds their gradients
    // against the composite formula.
    for (C c : {C{{}, 7, 7, 4, false}, C{{2}, 5, 9, 3, true}, C{{1, 2}, 1, 33, 8, false}, C{{}, 3, 3, 1, true},
                C{{}, 20, 20, 64, true}, C{{2}, 130, 130, 64, false}, C{{}, 130, 130, 64, true},
                C{{}, 100, 100, 128, true}, C{{}, 97, 97, 128, false}, C{{2}, 37, 300, 5, false},
                C{{}, 37, 300, 5, true}, C{{}, 300, 300, 7, true}}) {
      Shape qs = c.lead, ks = c.lead;
      qs.insert(qs.end(), {c.nq, c.d});
      ks.insert(ks.end(), {c.nk, c.d});
      AttentionOptions o;
      o.causal = c.causal;
      v.push_back(make_sample("q " + to_string(qs) + ", k " + to_string(ks) + (c.causal ? " causal" : ""),
                       {rand64(qs, 201), rand64(ks, 202), rand64(ks, 203)},
                       [o](const std::vector<Tensor>& x) { return attention(x[0], x[1], x[2], o); },
                       [o](const std::vector<Tensor>& x) { return ref_attention(x[0], x[1], x[2], o.causal); }, 1e-11));
      // Finite differences need two forwards per input element: only the small ones.
      if (v.back().inputs[0].numel() + 2 * v.back().inputs[1].numel() > 4000) v.back().gradcheck = false;
    }
    return v;
  };
  s.bench = [](int64_t n) {
    AttentionOptions o;
    return make_sample("q, k, v [" + std::to_string(n) + ", 64]", {rand64({n, 64}, 204), rand64({n, 64}, 205), rand64({n, 64}, 206)},
                [o](const std::vector<Tensor>& x) { return attention(x[0], x[1], x[2], o); },
                [o](const std::vector<Tensor>& x) { return ref_attention(x[0], x[1], x[2], o.causal); });
  };
  s.errors = {{"k and v of different shapes", [] { attention(rand64({3, 4}, 1), rand64({5, 4}, 2), rand64({6, 4}, 3)); },
               "attention: k and v must have the same shape"},
              {"causal with fewer keys than queries",
               [] {
                 AttentionOptions o;
                 o.causal = true;
                 attention(rand64({5, 4}, 1), rand64({3, 4}, 2), rand64({3, 4}, 3), o);
               },
               "attention: causal attention needs Nk >= Nq"},
              {"a kernel variant nobody registered",
               [] {
                 AttentionOptions o;
                 o.impl = "fast";
                 attention(rand64({5, 4}, 1), rand64({5, 4}, 2), rand64({5, 4}, 3), o);
               },
               "attention: variant 'fast' is not available on cpu"}};
  out.push_back(s);
}

}  // namespace

void add_select_specs(std::vector<OpSpec>& out) { select_specs(out); }
void add_sparse_specs(std::vector<OpSpec>& out) { sparse_specs(out); }
void add_attention_specs(std::vector<OpSpec>& out) { attention_spec(out); }

}  // namespace ember::optable
