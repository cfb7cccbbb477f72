// Specs of sum, max and matmul.
#include <limits>

#include "op_table/op_spec.h"

namespace ember::optable {
namespace {

// The reference of a reduction over `dims` (sorted): f folds the elements each output reads.
Tensor ref_reduce(const Tensor& x, const Shape& dims, bool keepdim, double init, double (*f)(double, double)) {
  Shape kept = x.shape();
  for (int64_t d : dims) kept[size_t(d)] = 1;
  Tensor acc = ref_tensor(kept, [&](const Shape&) { return init; });
  for_each_index(x.shape(), [&](const Shape& i) {
    Shape j = i;
    for (int64_t d : dims) j[size_t(d)] = 0;
    acc.set(j, f(acc.at(j), x.at(i)));
  });
  if (keepdim) return acc;
  Shape out;
  for (size_t i = 0; i < kept.size(); ++i)
    if (std::find(dims.begin(), dims.end(), int64_t(i)) == dims.end()) out.push_back(kept[i]);
  return acc.reshape(out);
}

}  // namespace

void add_reduce_specs(std::vector<OpSpec>& out) {
  struct C {
    Tensor x;
    Shape dims;  // sorted, non-negative; empty = all
    bool keepdim;
  };
  auto cases = [] {
    return std::vector<C>{{rand64({3, 4}, 61), {1}, false},        {rand64({3, 4}, 62), {0}, true},
                          {rand64({2, 3, 5}, 63), {0, 2}, false},  {rand64({7}, 64), {}, false},
                          {transposed64({33, 5}, 65), {0}, false}, {expanded64({4, 3}, 66), {0, 1}, true},
                          {rand64({1}, 67), {0}, true}};
  };
  OpSpec sum_spec;
  sum_spec.op = "sum";
  sum_spec.samples = [cases] {
    std::vector<Sample> v;
    for (const C& c : cases()) {
      Sample s;
      s.label = to_string(c.x.shape()) + " over " + to_string(c.dims) + (c.keepdim ? " keepdim" : "");
      s.inputs = {c.x};
      s.call = [c](const std::vector<Tensor>& a) { return sum(a[0], c.dims, c.keepdim); };
      s.reference = [c](const std::vector<Tensor>& a) {
        Shape dims = c.dims;
        if (dims.empty())
          for (int64_t i = 0; i < a[0].dim(); ++i) dims.push_back(i);
        return ref_reduce(a[0], dims, c.keepdim, 0.0, [](double p, double q) { return p + q; });
      };
      s.atol = 1e-12;
      v.push_back(s);
    }
    return v;
  };
  sum_spec.bench = [sum_spec](int64_t n) {
    Sample s = sum_spec.samples()[0];
    s.inputs = {rand64({n, n}, 68)};
    return s;
  };
  sum_spec.errors = {{"a repeated dim", [] { sum(rand64({2, 3}, 1), {1, -1}); }, "sum: repeated dim"},
                     {"a dim out of range", [] { sum(rand64({2, 3}, 1), {2}); }, "sum"}};
  out.push_back(sum_spec);

  OpSpec max_spec;
  max_spec.op = "max";
  max_spec.samples = [] {
    std::vector<Sample> v;
    struct M {
      Tensor x;
      int64_t dim;
      bool keepdim;
    };
    for (const M& m : {M{rand64({3, 4}, 71), 1, false}, M{rand64({3, 4}, 72), 0, true}, M{rand64({7}, 73), 0, false},
                       M{transposed64({5, 33}, 74), 0, false}, M{rand64({2, 3, 5}, 75), -1, true}}) {
      Sample s;
      s.label = to_string(m.x.shape()) + " dim " + std::to_string(m.dim) + (m.keepdim ? " keepdim" : "");
      s.inputs = {m.x};
      s.call = [m](const std::vector<Tensor>& a) { return max(a[0], m.dim, m.keepdim); };
      s.reference = [m](const std::vector<Tensor>& a) {
        int64_t d = m.dim < 0 ? m.dim + a[0].dim() : m.dim;
        return ref_reduce(a[0], {d}, m.keepdim, -std::numeric_limits<double>::infinity(),
                          [](double p, double q) { return q > p ? q : p; });
      };
      s.atol = s.rtol = 0;
      v.push_back(s);
    }
    return v;
  };
  max_spec.errors = {{"an empty dim", [] { max(rand64({0, 3}, 1), 0); }, "max: cannot take the max over an empty dimension"},
                     {"an empty tensor", [] { max(rand64({0, 3}, 1)); }, "max: cannot take the max of an empty tensor of shape [0, 3]"},
                     {"argmax of an empty dim", [] { argmax(rand64({0, 3}, 1), 0); }, "argmax: cannot take the max over an empty dimension"}};
  out.push_back(max_spec);

  OpSpec prod_spec;
  prod_spec.op = "prod";
  prod_spec.samples = [cases] {
    std::vector<Sample> v;
    for (const C& c : cases()) {
      Sample s;
      s.label = to_string(c.x.shape()) + " over " + to_string(c.dims) + (c.keepdim ? " keepdim" : "");
      s.inputs = {c.x};
      s.call = [c](const std::vector<Tensor>& a) { return prod(a[0], c.dims, c.keepdim); };
      s.reference = [c](const std::vector<Tensor>& a) {
        Shape dims = c.dims;
        if (dims.empty())
          for (int64_t i = 0; i < a[0].dim(); ++i) dims.push_back(i);
        return ref_reduce(a[0], dims, c.keepdim, 1.0, [](double p, double q) { return p * q; });
      };
      s.atol = 1e-12;
      v.push_back(s);
    }
    // Zeros: the gradient where one element of a row is zero is the product of the others.
    Sample z;
    z.label = "[3, 4] with zeros over [1]";
    z.inputs = {from_vector(std::vector<double>{0.5, -1.5, 2.0, 0.7, 1.1, 0.0, -0.8, 1.3, 0.9, 1.2, -0.6, 1.4}).reshape({3, 4})};
    z.call = [](const std::vector<Tensor>& a) { return prod(a[0], {1}); };
    z.reference = [](const std::vector<Tensor>& a) {
      return ref_reduce(a[0], {1}, false, 1.0, [](double p, double q) { return p * q; });
    };
    z.second_order = false;  // at exact zeros the second derivative is not tracked
    v.push_back(z);
    return v;
  };
  prod_spec.bench = [prod_spec](int64_t n) {
    Sample s = prod_spec.samples()[0];
    s.inputs = {rand64({n, n}, 68, true)};
    return s;
  };
  prod_spec.errors = {{"an int64 input", [] { prod(arange(4)); }, "prod: expected a float32 or float64 tensor"},
                      {"a dim out of range", [] { prod(rand64({2, 3}, 1), {2}); }, "prod"}};
  out.push_back(prod_spec);
}

void add_matmul_specs(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "matmul";
  s.samples = [] {
    std::vector<Sample> v;
    auto add = [&](const std::string& label, Tensor a, Tensor b) {
      Sample smp;
      smp.label = label;
      smp.inputs = {a, b};
      smp.call = [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); };
      smp.reference = [](const std::vector<Tensor>& x) {
        // NumPy's rules: 1-d operands promoted and the added dim dropped; batch dims broadcast.
        Tensor a = x[0].dim() == 1 ? x[0].unsqueeze(0) : x[0], b = x[1].dim() == 1 ? x[1].unsqueeze(1) : x[1];
        Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
        Shape batch = ref_broadcast(ab, bb), o = batch;
        int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
        o.insert(o.end(), {m, n});
        Tensor r = ref_tensor(o, [&](const Shape& i) {
          Shape bi(i.begin(), i.end() - 2);
          Shape ia = broadcast_index(bi, ab), ib = broadcast_index(bi, bb);
          ia.insert(ia.end(), {i[i.size() - 2], 0});
          ib.insert(ib.end(), {0, i.back()});
          double acc = 0;
          for (int64_t p = 0; p < k; ++p) {
            ia.back() = p;
            ib[ib.size() - 2] = p;
            acc += a.at(ia) * b.at(ib);
          }
          return acc;
        });
        if (x[0].dim() == 1) r = r.squeeze(-2);
        if (x[1].dim() == 1) r = r.squeeze(-1);
        return r;
      };
      smp.atol = 1e-12;
      v.push_back(smp);
    };
    add("[7, 33] @ [33, 5]", rand64({7, 33}, 81), rand64({33, 5}, 82));
    add("[1, 7] @ [7, 1]", rand64({1, 7}, 83), rand64({7, 1}, 84));
    add("transposed [5, 9] @ strided [9, 4]", transposed64({5, 9}, 85), strided64({9, 4}, 86));
    add("[2, 3, 4] @ [4, 5] (batch broadcast)", rand64({2, 3, 4}, 87), rand64({4, 5}, 88));
    add("[7] @ [7, 3] (1-d left)", rand64({7}, 89), rand64({7, 3}, 90));
    add("[3, 7] @ [7] (1-d right)", rand64({3, 7}, 91), rand64({7}, 92));
    add("[33, 17] @ transposed [17, 19]", rand64({33, 17}, 93), transposed64({17, 19}, 94));
    add("[2, 1, 3, 4] @ [5, 4, 2] expanded", rand64({2, 1, 3, 4}, 95), expanded64({5, 4, 2}, 96));
    // Matrix times column vector (the transposed GEMV path): transposed A, strided vector, a batch
    // sharing one vector (folded into one tall GEMV) and one vector per matrix.
    add("[19, 37] @ [37, 1]", rand64({19, 37}, 101), rand64({37, 1}, 102));
    add("transposed [9, 13] @ strided [13, 1]", transposed64({9, 13}, 103), strided64({13, 1}, 104));
    add("[3, 5, 11] @ [11, 1] (batch sharing the vector)", rand64({3, 5, 11}, 105), rand64({11, 1}, 106));
    add("[2, 5, 11] @ [2, 11, 1]", rand64({2, 5, 11}, 107), rand64({2, 11, 1}, 108));
    return v;
  };
  s.bench = [s](int64_t n) {
    Sample smp = s.samples()[0];
    smp.inputs = {rand64({n, n}, 97), rand64({n, n}, 98)};
    return smp;
  };
  s.f32_atol = 1e-5;
  s.errors = {{"inner dims that differ", [] { matmul(rand64({2, 3}, 1), rand64({4, 5}, 2)); },
               "matmul: inner dimensions differ, [2, 3] @ [4, 5] (3 vs 4)"},
              {"a 0-d operand", [] { matmul(rand64({}, 1), rand64({4}, 2)); }, "matmul: operands must be at least 1-d"},
              {"int64 operands", [] { matmul(arange(4).reshape({2, 2}), arange(4).reshape({2, 2})); },
               "matmul: got int64, accepts float32, float64, bfloat16, float16"},
              {"a variant nobody registered", [] {
                 MatmulOptions o;
                 o.impl = "no_such_kernel";
                 matmul(rand64({2, 3}, 1), rand64({3, 2}, 2), o);
               },
               "matmul: variant 'no_such_kernel' is not available on cpu (registered: auto, packed, blas"}};
  out.push_back(s);
}

}  // namespace ember::optable
