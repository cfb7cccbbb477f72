// The public op functions, one line each: a module function (ember.exp(x)) and, where the first
// argument is a tensor, a method (x.exp()). Kernels run without the GIL.
//
// tests/python/test_ops.py checks that every primitive of the op table (registered_ops()) is
// reachable under its name, or is listed in ember._INTERNAL_OPS with the reason, so that a new
// primitive cannot go missing from Python silently.
#include <limits>

#include "bindings.h"

namespace ember::py {
namespace {

struct Binder {
  nb::module_& m;
  nb::class_<Tensor>& cls;
  // Both a function and a method; the method's self is the first argument, so it drops that name.
  template <class F, class... Extra>
  void fm(const char* name, F&& f, const nb::arg& self, const Extra&... extra) {
    m.def(name, f, release_gil(), self, extra...);
    cls.def(name, f, release_gil(), extra...);
  }
  // A function only (the first argument is not the tensor a method would be called on).
  template <class F, class... Extra>
  void fn(const char* name, F&& f, const Extra&... extra) {
    m.def(name, f, release_gil(), extra...);
  }
};

using T = const Tensor&;
using nb::arg;

// A C++ pair, not a Python tuple: the op runs without the GIL, and nanobind converts the
// result after taking it back.
std::pair<Tensor, Tensor> pair(const TopK& r) { return {r.values, r.indices}; }

// A size given as one int or two, as PyTorch's conv and pool arguments: [k] means [k, k].
Pair pair2(const std::vector<int64_t>& v, const char* what) {
  EMBER_CHECK(v.size() == 1 || v.size() == 2, what, ": expected one or two sizes, got ", v.size());
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}
Conv2dOptions conv_options(const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                           const std::vector<int64_t>& dilation, int64_t groups) {
  Conv2dOptions o;
  o.stride = pair2(stride, "conv2d: stride");
  o.padding = pair2(padding, "conv2d: padding");
  o.dilation = pair2(dilation, "conv2d: dilation");
  o.groups = groups;
  return o;
}
using Sizes = const std::vector<int64_t>&;

// PyTorch's reduction strings.
Reduction reduction(const std::string& r) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  EMBER_CHECK(r == "none", "reduction must be 'mean', 'sum' or 'none', got '", r, "'");
  return Reduction::None;
}

}  // namespace

void bind_ops(nb::module_& m, nb::class_<Tensor>& cls) {
  Binder b{m, cls};
  // elementwise binary (broadcasting)
  b.fm("add", [](T a, T x) { return add(a, x); }, arg("a"), arg("b"));
  b.fm("sub", [](T a, T x) { return sub(a, x); }, arg("a"), arg("b"));
  b.fm("mul", [](T a, T x) { return mul(a, x); }, arg("a"), arg("b"));
  b.fm("div", [](T a, T x) { return div(a, x); }, arg("a"), arg("b"));
  b.fm("pow", [](T a, T x) { return pow(a, x); }, arg("a"), arg("b"));
  b.fm("pow", [](T a, double e) { return pow(a, e); }, arg("a"), arg("exponent"));
  b.fm("maximum", [](T a, T x) { return maximum(a, x); }, arg("a"), arg("b"));
  b.fm("minimum", [](T a, T x) { return minimum(a, x); }, arg("a"), arg("b"));
  b.fm("gt", [](T a, T x) { return gt(a, x); }, arg("a"), arg("b"));
  b.fm("ge", [](T a, T x) { return ge(a, x); }, arg("a"), arg("b"));
  b.fm("lt", [](T a, T x) { return lt(a, x); }, arg("a"), arg("b"));
  b.fm("le", [](T a, T x) { return le(a, x); }, arg("a"), arg("b"));
  b.fm("eq", [](T a, T x) { return eq(a, x); }, arg("a"), arg("b"));
  b.fm("ne", [](T a, T x) { return ne(a, x); }, arg("a"), arg("b"));
  b.fm("logical_and", [](T a, T x) { return logical_and(a, x); }, arg("a"), arg("b"));
  b.fm("logical_or", [](T a, T x) { return logical_or(a, x); }, arg("a"), arg("b"));
  b.fm("logical_xor", [](T a, T x) { return logical_xor(a, x); }, arg("a"), arg("b"));
  b.fm("logical_not", [](T x) { return logical_not(x); }, arg("x"));
  b.fm("any", [](T x) { return any(x); }, arg("x"));
  b.fm("all", [](T x) { return all(x); }, arg("x"));
  b.fn("where", [](T c, T a, T x) { return where(c, a, x); }, arg("cond"), arg("a"), arg("b"));
  b.fm("masked_fill", [](T x, T mask, double v) { return masked_fill(x, mask, v); }, arg("x"), arg("mask"), arg("value"));
  b.fm("cast", [](T x, DType d) { return cast(x, d); }, arg("x"), arg("dtype"));
  // elementwise unary
  // gelu(x, tanh_approximation=False) first, so that it answers gelu(x) too.
  b.fm("gelu", [](T x, bool t) { return gelu(x, t); }, arg("x"), arg("tanh_approximation") = false);
#define EMBER_BIND_UNARY(K, name, ...) b.fm(#name, [](T x) { return name(x); }, arg("x"));
  EMBER_UNARY_OPS(EMBER_BIND_UNARY)
#undef EMBER_BIND_UNARY
  b.fm("clamp", [](T x, std::optional<double> lo, std::optional<double> hi) {
    double inf = std::numeric_limits<double>::infinity();
    return clamp(x, lo ? *lo : -inf, hi ? *hi : inf);
  }, arg("x"), arg("min") = nb::none(), arg("max") = nb::none());
  b.fm("leaky_relu", [](T x, double s) { return leaky_relu(x, s); }, arg("x"), arg("negative_slope") = 0.01);
  b.fm("elu", [](T x, double a) { return elu(x, a); }, arg("x"), arg("alpha") = 1.0);
  b.fm("softplus", [](T x, double beta, double th) { return softplus(x, beta, th); }, arg("x"), arg("beta") = 1.0, arg("threshold") = 20.0);
  // reductions
  // sum(x), sum(x, 1), sum(x, (0, 1)): the int overload first, then a sequence or None (every dim)
  b.fm("sum", [](T x, int64_t d, bool k) { return sum(x, {d}, k); }, arg("x"), arg("dim"), arg("keepdim") = false);
  b.fm("sum", [](T x, std::optional<Shape> d, bool k) { return sum(x, d ? *d : Shape{}, k); }, arg("x"), arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("mean", [](T x, int64_t d, bool k) { return mean(x, {d}, k); }, arg("x"), arg("dim"), arg("keepdim") = false);
  b.fm("mean", [](T x, std::optional<Shape> d, bool k) { return mean(x, d ? *d : Shape{}, k); }, arg("x"), arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("max", [](T x, std::optional<int64_t> d, bool k) { return d ? max(x, *d, k) : max(x); }, arg("x"), arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("argmax", [](T x, int64_t d, bool k) { return argmax(x, d, k); }, arg("x"), arg("dim"), arg("keepdim") = false);
  b.fm("min", [](T x, std::optional<int64_t> d, bool k) { return d ? min(x, *d, k) : min(x); }, arg("x"), arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("argmin", [](T x, int64_t d, bool k) { return argmin(x, d, k); }, arg("x"), arg("dim"), arg("keepdim") = false);
  // Like sum: an int dim first, then a sequence or None (every dim).
  b.fm("prod", [](T x, int64_t d, bool k) { return prod(x, {d}, k); }, arg("x"), arg("dim"), arg("keepdim") = false);
  b.fm("var", [](T x, int64_t d, double c, bool k) { return var(x, {d}, c, k); }, arg("x"), arg("dim"), arg("correction") = 1.0, arg("keepdim") = false);
  b.fm("std", [](T x, int64_t d, double c, bool k) { return ember::std(x, {d}, c, k); }, arg("x"), arg("dim"), arg("correction") = 1.0, arg("keepdim") = false);
  b.fm("norm", [](T x, double p, int64_t d, bool k) { return norm(x, p, {d}, k); }, arg("x"), arg("p"), arg("dim"), arg("keepdim") = false);
  b.fm("prod", [](T x, std::optional<Shape> d, bool k) { return prod(x, d ? *d : Shape{}, k); }, arg("x"), arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("var", [](T x, std::optional<Shape> d, double c, bool k) { return var(x, d ? *d : Shape{}, c, k); }, arg("x"), arg("dim") = nb::none(), arg("correction") = 1.0, arg("keepdim") = false);
  b.fm("std", [](T x, std::optional<Shape> d, double c, bool k) { return ember::std(x, d ? *d : Shape{}, c, k); }, arg("x"), arg("dim") = nb::none(), arg("correction") = 1.0, arg("keepdim") = false);
  b.fm("norm", [](T x, double p, std::optional<Shape> d, bool k) { return norm(x, p, d ? *d : Shape{}, k); }, arg("x"), arg("p") = 2.0, arg("dim") = nb::none(), arg("keepdim") = false);
  b.fm("sum_to", [](T x, const Shape& s) { return sum_to(x, s); }, arg("x"), arg("shape"));
  b.fm("cumsum", [](T x, int64_t d) { return cumsum(x, d); }, arg("x"), arg("dim"));
  b.fm("cumsum_reverse", [](T x, int64_t d) { return cumsum_reverse(x, d); }, arg("x"), arg("dim"));
  // matmul, linear layers, normalisation, losses
  // impl: "auto" (the library's kernel), or a variant by name (after ember.register_study_kernels(),
  // the matmul study's "naive", "ikj" and "blocked" on the CPU, and its CUDA kernels on CUDA
  // tensors); tile: the CUDA study's "tiled" reads it (4, 8, 16 or 32).
  b.fm("matmul", [](T a, T x, const std::string& impl, int tile) {
    MatmulOptions o;
    o.impl = impl;
    o.tile = tile;
    return matmul(a, x, o);
  }, arg("a"), arg("b"), arg("impl") = "auto", arg("tile") = 16);
  b.fm("linear", [](T x, T w, std::optional<Tensor> bias) { return linear(x, w, bias ? *bias : Tensor()); }, arg("x"), arg("weight"), arg("bias") = nb::none());
  b.fm("softmax", [](T x, int64_t d) { return softmax(x, d); }, arg("x"), arg("dim") = -1);
  b.fm("log_softmax", [](T x, int64_t d) { return log_softmax(x, d); }, arg("x"), arg("dim") = -1);
  b.fm("logsumexp", [](T x, int64_t d, bool k) { return logsumexp(x, d, k); }, arg("x"), arg("dim") = -1, arg("keepdim") = false);
  b.fm("layer_norm", [](T x, T w, T bias, double eps) { return layer_norm(x, w, bias, eps); }, arg("x"), arg("weight"), arg("bias"), arg("eps") = 1e-5);
  b.fm("batch_norm", [](T x, std::optional<Tensor> rm, std::optional<Tensor> rv, std::optional<Tensor> w, std::optional<Tensor> bias, bool training, double momentum, double eps) {
    return batch_norm(x, rm ? *rm : Tensor(), rv ? *rv : Tensor(), w ? *w : Tensor(), bias ? *bias : Tensor(), training, momentum, eps);
  }, arg("x"), arg("running_mean") = nb::none(), arg("running_var") = nb::none(), arg("weight") = nb::none(), arg("bias") = nb::none(), arg("training") = false, arg("momentum") = 0.1, arg("eps") = 1e-5);
  b.fm("group_norm", [](T x, int64_t groups, std::optional<Tensor> w, std::optional<Tensor> bias, double eps) { return group_norm(x, groups, w ? *w : Tensor(), bias ? *bias : Tensor(), eps); }, arg("x"), arg("num_groups"), arg("weight") = nb::none(), arg("bias") = nb::none(), arg("eps") = 1e-5);
  b.fm("rms_norm", [](T x, std::optional<Tensor> w, double eps) { return rms_norm(x, w ? *w : Tensor(), eps); }, arg("x"), arg("weight") = nb::none(), arg("eps") = 1e-6);
  // convolution and pooling (NCHW; sizes as one int or two)
  b.fm("conv2d", [](T x, T w, std::optional<Tensor> bias, Sizes stride, Sizes padding, Sizes dilation, int64_t groups) {
    return conv2d(x, w, bias ? *bias : Tensor(), conv_options(stride, padding, dilation, groups));
  }, arg("x"), arg("weight"), arg("bias") = nb::none(), arg("stride") = std::vector<int64_t>{1}, arg("padding") = std::vector<int64_t>{0}, arg("dilation") = std::vector<int64_t>{1}, arg("groups") = 1);
  b.fm("conv1d", [](T x, T w, std::optional<Tensor> bias, int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    return conv1d(x, w, bias ? *bias : Tensor(), stride, padding, dilation, groups);
  }, arg("x"), arg("weight"), arg("bias") = nb::none(), arg("stride") = 1, arg("padding") = 0, arg("dilation") = 1, arg("groups") = 1);
  b.fm("max_pool2d", [](T x, Sizes k, std::optional<std::vector<int64_t>> s, Sizes p, Sizes d) {
    return max_pool2d(x, pair2(k, "max_pool2d: kernel_size"), s ? pair2(*s, "max_pool2d: stride") : Pair{0, 0}, pair2(p, "max_pool2d: padding"), pair2(d, "max_pool2d: dilation"));
  }, arg("x"), arg("kernel_size"), arg("stride") = nb::none(), arg("padding") = std::vector<int64_t>{0}, arg("dilation") = std::vector<int64_t>{1});
  b.fm("avg_pool2d", [](T x, Sizes k, std::optional<std::vector<int64_t>> s, Sizes p) {
    return avg_pool2d(x, pair2(k, "avg_pool2d: kernel_size"), s ? pair2(*s, "avg_pool2d: stride") : Pair{0, 0}, pair2(p, "avg_pool2d: padding"));
  }, arg("x"), arg("kernel_size"), arg("stride") = nb::none(), arg("padding") = std::vector<int64_t>{0});
  b.fm("adaptive_avg_pool2d", [](T x, Sizes out) { return adaptive_avg_pool2d(x, pair2(out, "adaptive_avg_pool2d: output_size")); }, arg("x"), arg("output_size"));
  b.fm("cross_entropy", [](T logits, T targets, const std::string& r, int64_t ignore, double smoothing) {
    CrossEntropyOptions o;
    o.reduction = reduction(r);
    o.ignore_index = ignore;
    o.label_smoothing = smoothing;
    return cross_entropy(logits, targets, o);
  }, arg("logits"), arg("targets"), arg("reduction") = "mean", arg("ignore_index") = -100, arg("label_smoothing") = 0.0);
  b.fm("mse_loss", [](T x, T t, const std::string& r) { return mse_loss(x, t, reduction(r)); }, arg("input"), arg("target"), arg("reduction") = "mean");
  b.fm("l1_loss", [](T x, T t, const std::string& r) { return l1_loss(x, t, reduction(r)); }, arg("input"), arg("target"), arg("reduction") = "mean");
  b.fm("smooth_l1_loss", [](T x, T t, const std::string& r, double beta) { return smooth_l1_loss(x, t, reduction(r), beta); }, arg("input"), arg("target"), arg("reduction") = "mean", arg("beta") = 1.0);
  b.fm("nll_loss", [](T x, T t, const std::string& r, int64_t ignore) { return nll_loss(x, t, reduction(r), ignore); }, arg("input"), arg("target"), arg("reduction") = "mean", arg("ignore_index") = -100);
  b.fm("binary_cross_entropy", [](T x, T t, const std::string& r) { return binary_cross_entropy(x, t, reduction(r)); }, arg("input"), arg("target"), arg("reduction") = "mean");
  b.fm("binary_cross_entropy_with_logits", [](T x, T t, const std::string& r) { return binary_cross_entropy_with_logits(x, t, reduction(r)); }, arg("input"), arg("target"), arg("reduction") = "mean");
  b.fn("embedding", [](T w, T ids) { return embedding(w, ids); }, arg("weight"), arg("ids"));
  b.fm("dropout", [](T x, double p, bool training) { return dropout(x, p, training); }, arg("x"), arg("p"), arg("training") = true);
  // impl: "auto" (the library's kernel: FlashAttention-2 on the CPU), "flash2", or a variant by name
  // (after ember.register_study_kernels(), the attention study's "flash" and "standard").
  b.fn("attention", [](T q, T k, T v, bool causal, const std::string& impl, double scale) {
    AttentionOptions o;
    o.causal = causal;
    o.impl = impl;
    o.scale = scale;
    return attention(q, k, v, o);
  }, arg("q"), arg("k"), arg("v"), arg("causal") = false, arg("impl") = "auto", arg("scale") = 0.0);
  // shapes (the Tensor methods of the same names are views from tensor.cpp)
  b.fn("reshape", [](T x, const Shape& s) { return reshape(x, s); }, arg("x"), arg("shape"));
  b.fn("view", [](T x, const Shape& s) { return view(x, s); }, arg("x"), arg("shape"));
  b.fn("transpose", [](T x, int64_t d0, int64_t d1) { return transpose(x, d0, d1); }, arg("x"), arg("dim0"), arg("dim1"));
  b.fn("permute", [](T x, const Shape& d) { return permute(x, d); }, arg("x"), arg("dims"));
  b.fn("slice", [](T x, int64_t d, int64_t s, int64_t e, int64_t st) { return slice(x, d, s, e, st); }, arg("x"), arg("dim"), arg("start"), arg("end"), arg("step") = 1);
  b.fn("expand", [](T x, const Shape& s) { return expand(x, s); }, arg("x"), arg("shape"));
  b.fn("unsqueeze", [](T x, int64_t d) { return unsqueeze(x, d); }, arg("x"), arg("dim"));
  b.fn("squeeze", [](T x, int64_t d) { return squeeze(x, d); }, arg("x"), arg("dim"));
  b.fm("copy", [](T x) { return copy(x); }, arg("x"));
  b.fn("concat", [](const std::vector<Tensor>& xs, int64_t d) { return concat(xs, d); }, arg("tensors"), arg("dim") = 0);
  b.fn("stack", [](const std::vector<Tensor>& xs, int64_t d) { return stack(xs, d); }, arg("tensors"), arg("dim") = 0);
  b.fm("split", [](T x, const std::vector<int64_t>& sizes, int64_t d) { return split(x, sizes, d); }, arg("x"), arg("sizes"), arg("dim") = 0);
  b.fm("split", [](T x, int64_t size, int64_t d) { return split(x, size, d); }, arg("x"), arg("size"), arg("dim") = 0);
  // indexing, rearranging, constructors
  b.fm("gather", [](T x, int64_t d, T index) { return gather(x, d, index); }, arg("x"), arg("dim"), arg("index"));
  b.fm("scatter_add", [](T x, int64_t d, T index, T src) { return scatter_add(x, d, index, src); }, arg("x"), arg("dim"), arg("index"), arg("src"));
  b.fm("index_select", [](T x, int64_t d, T index) { return index_select(x, d, index); }, arg("x"), arg("dim"), arg("index"));
  b.fn("one_hot", [](T ids, int64_t n) { return one_hot(ids, n); }, arg("indices"), arg("num_classes") = -1);
  b.fm("nonzero", [](T x) { return nonzero(x); }, arg("x"));
  b.fm("flip", [](T x, const Shape& d) { return flip(x, d); }, arg("x"), arg("dims"));
  b.fm("roll", [](T x, int64_t s, int64_t d) { return roll(x, s, d); }, arg("x"), arg("shift"), arg("dim"));
  b.fm("repeat", [](T x, const Shape& r) { return repeat(x, r); }, arg("x"), arg("repeats"));
  b.fm("tril", [](T x, int64_t k) { return tril(x, k); }, arg("x"), arg("diagonal") = 0);
  b.fm("triu", [](T x, int64_t k) { return triu(x, k); }, arg("x"), arg("diagonal") = 0);
  b.fn("pad", [](T x, const std::vector<int64_t>& pads, const std::string& mode, double value) {
    EMBER_CHECK(mode == "constant" || mode == "reflect", "pad: mode must be 'constant' or 'reflect', got '", mode, "'");
    return pad(x, pads, mode == "constant" ? PadMode::Constant : PadMode::Reflect, value);
  }, arg("x"), arg("pad"), arg("mode") = "constant", arg("value") = 0.0);
  b.fn("eye", [](int64_t n, int64_t m, DType d) { return eye(n, m, d); }, arg("n"), arg("m") = -1, arg("dtype") = DType::Float32);
  b.fn("linspace", [](double a, double e, int64_t n, DType d) { return linspace(a, e, n, d); }, arg("start"), arg("end"), arg("steps"), arg("dtype") = DType::Float32);
  b.fn("einsum", [](const std::string& eq, const std::vector<Tensor>& xs) { return einsum(eq, xs); }, arg("equation"), arg("operands"));
  // selection: (values, indices) pairs
  b.fm("topk", [](T x, int64_t k, bool largest) { return pair(topk(x, k, largest)); }, arg("x"), arg("k"), arg("largest") = true);
  b.fm("sort", [](T x, bool descending) { return pair(sort(x, descending)); }, arg("x"), arg("descending") = false);
  // backward helpers, public in C++ and useful to check a rule by hand
  b.fn("embedding_backward", [](T g, T ids, int64_t n) { return embedding_backward(g, ids, n); }, arg("g"), arg("ids"), arg("num_embeddings"));
  b.fn("conv2d_input_grad", [](T g, T w, const Shape& xs, Sizes stride, Sizes padding, Sizes dilation, int64_t groups) {
    return conv2d_input_grad(g, w, xs, conv_options(stride, padding, dilation, groups));
  }, arg("g"), arg("weight"), arg("input_shape"), arg("stride") = std::vector<int64_t>{1}, arg("padding") = std::vector<int64_t>{0}, arg("dilation") = std::vector<int64_t>{1}, arg("groups") = 1);
  b.fn("conv2d_weight_grad", [](T x, T g, const Shape& ws, Sizes stride, Sizes padding, Sizes dilation, int64_t groups) {
    return conv2d_weight_grad(x, g, ws, conv_options(stride, padding, dilation, groups));
  }, arg("x"), arg("g"), arg("weight_shape"), arg("stride") = std::vector<int64_t>{1}, arg("padding") = std::vector<int64_t>{0}, arg("dilation") = std::vector<int64_t>{1}, arg("groups") = 1);
  b.fn("slice_backward", [](T g, const Shape& s, int64_t d, int64_t st, int64_t step) { return slice_backward(g, s, d, st, step); }, arg("g"), arg("shape"), arg("dim"), arg("start"), arg("step"));

  // The op table itself: every primitive with what it declares (bench_ops --list's columns).
  m.def("registered_ops", [] {
    builtin_ops();  // the table is complete once every family has been built
    nb::list out;
    for (const auto& op : registered_ops()) {
      nb::dict d;
      d["name"] = op->name;
      nb::list dtypes;
      for (DType t : op->dtypes) dtypes.append(t);
      d["dtypes"] = dtypes;
      d["cpu"] = op->kernel[size_t(Device::CPU)];
      d["cuda"] = op->kernel[size_t(Device::CUDA)];
      d["vjp"] = op->has_vjp;
      d["jvp"] = op->has_jvp;
      d["builtin"] = op->builtin;
      nb::list variants;
      for (const auto& [dev, v] : op->variants()) variants.append(nb::make_tuple(dev, v));
      d["variants"] = variants;
      out.append(d);
    }
    return out;
  });
}

}  // namespace ember::py
