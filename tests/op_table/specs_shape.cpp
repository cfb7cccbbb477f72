// Specs of the view and copy primitives.
#include "op_table/op_spec.h"

namespace ember::optable {
namespace {

// Views and copies move values exactly.
Sample sample(const std::string& label, std::vector<Tensor> in, Fn call, Fn ref) {
  Sample s = make_sample(label, std::move(in), std::move(call), std::move(ref), 0);
  s.rtol = 0;
  return s;
}

// x read at a position of the result: the reference of every view, by index arithmetic alone.
Fn view_ref(Shape out, std::function<Shape(const Shape&)> index_in_x) {
  return [out, index_in_x](const std::vector<Tensor>& x) {
    return ref_tensor(out, [&](const Shape& i) { return x[0].at(index_in_x(i)); });
  };
}

// Row-major position <-> multi-index, for reshape's reference.
Shape unravel(int64_t p, const Shape& shape) {
  Shape i(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    i[d] = p % shape[d];
    p /= shape[d];
  }
  return i;
}
int64_t ravel(const Shape& i, const Shape& shape) {
  int64_t p = 0;
  for (size_t d = 0; d < shape.size(); ++d) p = p * shape[d] + i[d];
  return p;
}

OpSpec spec(const char* op, std::function<std::vector<Sample>()> samples, std::vector<ErrorCase> errors) {
  OpSpec s;
  s.op = op;
  s.samples = std::move(samples);
  s.errors = std::move(errors);
  return s;
}

}  // namespace

void add_shape_specs(std::vector<OpSpec>& out) {
  out.push_back(spec(
      "view",
      [] {
        std::vector<Sample> v;
        for (auto [from, to] : {std::pair<Shape, Shape>{{3, 4}, {2, 6}}, {{7}, {7, 1}}, {{2, 3, 5}, {6, 5}}, {{1}, {}}}) {
          v.push_back(sample(
              to_string(from) + " as " + to_string(to), {rand64(from, 41)},
              [to = to](const std::vector<Tensor>& x) { return view(x[0], to); },
              view_ref(to, [from = from, to = to](const Shape& i) { return unravel(ravel(i, to), from); })));
        }
        // Strided inputs that a view can still serve: splitting a strided or transposed dim, and
        // GPT-2's head split (a slice of the fused QKV projection, [B, T, C] -> [B, T, H, C/H]).
        Tensor head = rand64({2, 5, 36}, 44).slice(-1, 12, 24);
        for (auto [x, to] : {std::pair<Tensor, Shape>{strided64({3, 4}, 42), {3, 2, 2}},
                             {transposed64({3, 4}, 43), {3, 2, 2}}, {head, {2, 5, 3, 4}}, {head, {10, 12}}}) {
          Shape from = x.shape();
          v.push_back(sample(
              to_string(from) + " strided as " + to_string(to), {x},
              [to = to](const std::vector<Tensor>& in) { return view(in[0], to); },
              view_ref(to, [from = from, to = to](const Shape& i) { return unravel(ravel(i, to), from); })));
        }
        return v;
      },
      {{"a non-contiguous input", [] { view(transposed64({3, 4}, 1), {12}); }, "view: the tensor of shape [3, 4] and strides [1, 3] cannot be viewed as [12] without a copy"},
       {"a size that does not fit", [] { view(rand64({3, 4}, 1), {5, -1}); }, "view: cannot infer -1"}}));
  out.push_back(spec(
      "permute",
      [] {
        std::vector<Sample> v;
        for (auto [shape, p] : {std::pair<Shape, Shape>{{3, 4}, {1, 0}}, {{2, 3, 5}, {2, 0, 1}}, {{1, 7, 1}, {1, 2, 0}}}) {
          Shape o(p.size());
          for (size_t i = 0; i < p.size(); ++i) o[i] = shape[size_t(p[i])];
          v.push_back(sample(
              to_string(shape) + " by " + to_string(p), {rand64(shape, 42)},
              [p = p](const std::vector<Tensor>& x) { return permute(x[0], p); },
              view_ref(o, [p = p](const Shape& i) {
                Shape j(p.size());
                for (size_t k = 0; k < p.size(); ++k) j[size_t(p[k])] = i[k];
                return j;
              })));
        }
        v.push_back(sample("transpose of a strided [4, 9]", {strided64({4, 9}, 43)},
                           [](const std::vector<Tensor>& x) { return x[0].transpose(0, 1); },
                           view_ref({9, 4}, [](const Shape& i) { return Shape{i[1], i[0]}; })));
        return v;
      },
      {{"a repeated dim", [] { permute(rand64({2, 3}, 1), {0, 0}); }, "permute: dim 0 repeats"},
       {"too few dims", [] { permute(rand64({2, 3}, 1), {0}); }, "permute: got 1 dims"}}));
  out.push_back(spec(
      "slice",
      [] {
        std::vector<Sample> v;
        struct C {
          Shape shape;
          int64_t dim, start, end, step;
        };
        for (C c : {C{{7}, 0, 1, 6, 2}, C{{3, 33}, 1, -10, 33, 3}, C{{5, 4}, 0, 0, 1, 1}, C{{2, 7, 3}, 1, 2, 100, 1}}) {
          Tensor x = rand64(c.shape, 44);
          int64_t n = c.shape[size_t(c.dim)];
          int64_t start = std::clamp<int64_t>(c.start < 0 ? c.start + n : c.start, 0, n);
          int64_t end = std::clamp<int64_t>(c.end, start, n);
          Shape o = c.shape;
          o[size_t(c.dim)] = (end - start + c.step - 1) / c.step;
          v.push_back(sample(
              to_string(c.shape) + " dim " + std::to_string(c.dim) + " [" + std::to_string(c.start) + ":" +
                  std::to_string(c.end) + ":" + std::to_string(c.step) + "]",
              {x}, [c](const std::vector<Tensor>& a) { return slice(a[0], c.dim, c.start, c.end, c.step); },
              view_ref(o, [c, start](const Shape& i) {
                Shape j = i;
                j[size_t(c.dim)] = start + i[size_t(c.dim)] * c.step;
                return j;
              })));
        }
        return v;
      },
      {{"step 0", [] { slice(rand64({4}, 1), 0, 0, 4, 0); }, "slice: step must be positive"},
       {"a 0-d input", [] { slice(rand64({}, 1), 0, 0, 1); }, "slice: cannot slice a 0-d tensor"}}));
  out.push_back(spec(
      "expand",
      [] {
        std::vector<Sample> v;
        for (auto [from, to] : {std::pair<Shape, Shape>{{3, 1}, {3, 4}}, {{1}, {2, 7}}, {{}, {5}}, {{1, 4}, {2, 3, 4}}}) {
          v.push_back(sample(to_string(from) + " to " + to_string(to), {rand64(from, 45)},
                             [to = to](const std::vector<Tensor>& x) { return expand(x[0], to); },
                             view_ref(to, [from = from](const Shape& i) { return broadcast_index(i, from); })));
        }
        return v;
      },
      {{"a dim that is not 1", [] { expand(rand64({3, 2}, 1), {3, 4}); }, "expand: cannot expand shape [3, 2]"},
       {"fewer dims", [] { expand(rand64({3, 2}, 1), {2}); }, "expand: cannot expand shape [3, 2] to [2] (fewer dimensions)"}}));
  out.push_back(spec(
      "unsqueeze",
      [] {
        std::vector<Sample> v;
        for (auto [shape, d] : {std::pair<Shape, int64_t>{{3, 4}, 1}, {{7}, 0}, {{}, 0}, {{2, 3}, -1}}) {
          Shape o = shape;
          int64_t w = d < 0 ? d + int64_t(shape.size()) + 1 : d;
          o.insert(o.begin() + w, 1);
          v.push_back(sample(to_string(shape) + " at " + std::to_string(d), {rand64(shape, 46)},
                             [d = d](const std::vector<Tensor>& x) { return unsqueeze(x[0], d); },
                             view_ref(o, [w](const Shape& i) {
                               Shape j = i;
                               j.erase(j.begin() + w);
                               return j;
                             })));
        }
        return v;
      },
      {{"a dim out of range", [] { unsqueeze(rand64({3}, 1), 3); }, "unsqueeze"}}));
  out.push_back(spec(
      "squeeze",
      [] {
        std::vector<Sample> v;
        for (auto [shape, d] : {std::pair<Shape, int64_t>{{3, 1}, 1}, {{1, 7}, 0}, {{1}, 0}, {{2, 1, 3}, -2}}) {
          Shape o = shape;
          int64_t w = d < 0 ? d + int64_t(shape.size()) : d;
          o.erase(o.begin() + w);
          v.push_back(sample(to_string(shape) + " at " + std::to_string(d), {rand64(shape, 47)},
                             [d = d](const std::vector<Tensor>& x) { return squeeze(x[0], d); },
                             view_ref(o, [w](const Shape& i) {
                               Shape j = i;
                               j.insert(j.begin() + w, 0);
                               return j;
                             })));
        }
        return v;
      },
      {{"a dim that is not 1", [] { squeeze(rand64({3, 2}, 1), 1); }, "squeeze: dim 1 of shape [3, 2] is not 1"}}));
  out.push_back(spec(
      "copy",
      [] {
        std::vector<Sample> v;
        for (Tensor x : {rand64({3, 4}, 48), transposed64({7, 5}, 49), strided64({2, 9}, 50), expanded64({4, 3}, 51), rand64({}, 52)})
          v.push_back(sample(to_string(x.shape()) + (x.is_contiguous() ? "" : " non-contiguous"), {x},
                             [](const std::vector<Tensor>& a) { return a[0].contiguous(); },
                             [](const std::vector<Tensor>& a) { return ref_unary(a[0], [](double t) { return t; }); }));
        return v;
      },
      {{"an undefined input", [] { copy(Tensor()); }, "copy: input is undefined"}}));
  out.push_back(spec(
      "slice_backward",
      [] {
        std::vector<Sample> v;
        struct C {
          Shape g, full;
          int64_t dim, start, step;
        };
        for (C c : {C{{3}, {7}, 0, 1, 2}, C{{2, 4}, {5, 4}, 0, 3, 1}, C{{3, 2}, {3, 7}, 1, 0, 5}}) {
          v.push_back(sample(
              "g " + to_string(c.g) + " into " + to_string(c.full), {rand64(c.g, 53)},
              [c](const std::vector<Tensor>& a) { return slice_backward(a[0], c.full, c.dim, c.start, c.step); },
              [c](const std::vector<Tensor>& a) {
                return ref_tensor(c.full, [&](const Shape& i) {
                  int64_t p = i[size_t(c.dim)] - c.start;
                  if (p < 0 || p % c.step != 0 || p / c.step >= c.g[size_t(c.dim)]) return 0.0;
                  Shape j = i;
                  j[size_t(c.dim)] = p / c.step;
                  return a[0].at(j);
                });
              }));
        }
        return v;
      },
      {{"an undefined cotangent", [] { slice_backward(Tensor(), {3}, 0, 0, 1); }, "slice_backward: g is undefined"}}));
  out.push_back(spec(
      "concat",
      [] {
        std::vector<Sample> v;
        struct C {
          std::vector<Shape> parts;
          int64_t dim;
        };
        for (C c : {C{{{2, 3}, {4, 3}}, 0}, C{{{2, 1}, {2, 0}, {2, 5}}, 1}, C{{{7}}, 0}, C{{{3, 2}, {3, 2}}, -1}}) {
          std::vector<Tensor> in;
          for (size_t i = 0; i < c.parts.size(); ++i) in.push_back(rand64(c.parts[i], 54 + i));
          if (c.parts.size() == 2 && c.dim == -1) in[1] = transposed64({3, 2}, 58);
          std::string label;
          for (const Shape& p : c.parts) label += to_string(p) + " ";
          v.push_back(sample(label + "dim " + std::to_string(c.dim), in,
                             [c](const std::vector<Tensor>& a) { return concat(a, c.dim); },
                             [c](const std::vector<Tensor>& a) {
                               int64_t d = c.dim < 0 ? c.dim + a[0].dim() : c.dim;
                               Shape o = a[0].shape();
                               o[size_t(d)] = 0;
                               for (const Tensor& t : a) o[size_t(d)] += t.size(d);
                               return ref_tensor(o, [&](const Shape& i) {
                                 int64_t p = i[size_t(d)];
                                 for (const Tensor& t : a) {
                                   if (p < t.size(d)) {
                                     Shape j = i;
                                     j[size_t(d)] = p;
                                     return t.at(j);
                                   }
                                   p -= t.size(d);
                                 }
                                 return 0.0;
                               });
                             }));
        }
        return v;
      },
      {{"mismatched shapes", [] { concat({rand64({2, 3}, 1), rand64({2, 4}, 2)}, 0); }, "concat: tensor 1 has shape [2, 4]"},
       {"no tensors", [] { concat({}, 0); }, "concat: needs at least one tensor"}}));
}

}  // namespace ember::optable
