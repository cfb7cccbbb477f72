// Specs of gather and scatter_add (index_select, nll_loss and the smoothed cross_entropy are built
// on them).
#include "op_table/op_spec.h"

namespace ember::optable {
namespace {

// An int64 index of `shape` with values in [0, size), repeats included: (7 i + seed) mod size.
Tensor index_of(const Shape& shape, int64_t size, int64_t seed) {
  std::vector<int64_t> v(size_t(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (7 * int64_t(i) + seed) % size;
  return from_vector(v, shape);
}

struct Case {
  Shape x;
  int64_t dim;
  Shape index;
};

std::vector<Case> cases() {
  return {{{4, 5}, 1, {4, 3}}, {{4, 5}, 0, {6, 5}}, {{4, 5}, 1, {2, 3}}, {{2, 3, 4}, -1, {2, 3, 6}}, {{2, 3, 4}, 1, {2, 2, 4}},
          {{7}, 0, {9}}};
}

std::string label(const Case& c) {
  return to_string(c.x) + " dim " + std::to_string(c.dim) + " index " + to_string(c.index);
}

Shape with_dim(Shape i, int64_t dim, int64_t v) {
  i[size_t(dim)] = v;
  return i;
}

}  // namespace

void add_index_specs(std::vector<OpSpec>& out) {
  OpSpec g;
  g.op = "gather";
  g.samples = [] {
    std::vector<Sample> v;
    int64_t seed = 200;
    for (const Case& c : cases()) {
      int64_t d = c.dim < 0 ? c.dim + int64_t(c.x.size()) : c.dim;
      Sample s = make_sample(
          label(c), {rand64(c.x, uint64_t(seed)), index_of(c.index, c.x[size_t(d)], seed)},
          [d](const std::vector<Tensor>& a) { return gather(a[0], d, a[1]); },
          [d](const std::vector<Tensor>& a) {
            return ref_tensor(a[1].shape(), [&](const Shape& i) { return a[0].at(with_dim(i, d, int64_t(a[1].at(i)))); });
          },
          0);
      s.differentiable = {0};
      v.push_back(s);
      ++seed;
    }
    Sample t = make_sample(
        "transposed [5, 4] dim 0", {transposed64({5, 4}, 210), index_of({3, 4}, 5, 3)},
        [](const std::vector<Tensor>& a) { return gather(a[0], 0, a[1]); },
        [](const std::vector<Tensor>& a) {
          return ref_tensor(a[1].shape(), [&](const Shape& i) { return a[0].at(with_dim(i, 0, int64_t(a[1].at(i)))); });
        },
        0);
    t.differentiable = {0};
    v.push_back(t);
    return v;
  };
  g.errors = {{"an index past the dim", [] { gather(rand64({3, 4}, 1), 1, from_vector(std::vector<int64_t>{0, 4, 1}, {3, 1})); },
               "gather: index 4 is out of range for dim 1 of size 4 (input shape [3, 4])"},
              {"a negative index", [] { gather(rand64({3, 4}, 1), 0, from_vector(std::vector<int64_t>{-1}, {1, 1})); },
               "gather: index -1 is out of range for dim 0 of size 3"},
              {"a float index", [] { gather(rand64({3, 4}, 1), 0, rand64({1, 1}, 2)); }, "gather: index must be an int64 tensor"},
              {"an index with fewer dims", [] { gather(rand64({3, 4}, 1), 0, index_of({2}, 3, 0)); },
               "gather: index of shape [2] must have as many dims as the input [3, 4]"},
              {"an index larger in another dim", [] { gather(rand64({3, 4}, 1), 0, index_of({2, 5}, 3, 0)); },
               "gather: index of shape [2, 5] is larger than the input [3, 4] in dim 1"},
              {"a dim out of range", [] { gather(rand64({3, 4}, 1), 2, index_of({2, 4}, 3, 0)); }, "gather"}};
  out.push_back(g);

  OpSpec s;
  s.op = "scatter_add";
  s.samples = [] {
    std::vector<Sample> v;
    int64_t seed = 220;
    for (const Case& c : cases()) {
      int64_t d = c.dim < 0 ? c.dim + int64_t(c.x.size()) : c.dim;
      Sample smp = make_sample(
          label(c), {rand64(c.x, uint64_t(seed)), index_of(c.index, c.x[size_t(d)], seed), rand64(c.index, uint64_t(seed + 50))},
          [d](const std::vector<Tensor>& a) { return scatter_add(a[0], d, a[1], a[2]); },
          [d](const std::vector<Tensor>& a) {
            Tensor r = ref_tensor(a[0].shape(), [&](const Shape& i) { return a[0].at(i); });
            for_each_index(a[1].shape(), [&](const Shape& i) {
              Shape j = with_dim(i, d, int64_t(a[1].at(i)));
              r.set(j, r.at(j) + a[2].at(i));
            });
            return r;
          },
          1e-12);
      smp.differentiable = {0, 2};
      v.push_back(smp);
      ++seed;
    }
    return v;
  };
  s.errors = {{"an index past the dim",
               [] { scatter_add(rand64({3, 4}, 1), 0, from_vector(std::vector<int64_t>{3}, {1, 1}), rand64({1, 1}, 2)); },
               "scatter_add: index 3 is out of range for dim 0 of size 3 (input shape [3, 4])"},
              {"src not of the index's shape",
               [] { scatter_add(rand64({3, 4}, 1), 0, index_of({2, 4}, 3, 0), rand64({2, 3}, 2)); },
               "scatter_add: src of shape [2, 3] must have the index's shape [2, 4]"},
              {"src of another dtype",
               [] { scatter_add(rand64({3, 4}, 1), 0, index_of({2, 4}, 3, 0), rand64({2, 4}, 2).to(DType::Float32)); },
               "scatter_add: src is float32 but the input is float64"}};
  out.push_back(s);
}

}  // namespace ember::optable
