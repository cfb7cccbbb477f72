// Specs of the convolution, pooling and batch-norm primitives: conv2d and its two gradient ops,
// max_pool2d, batch_norm (training mode). The references are direct loops over every tap.
#include <cmath>
#include <functional>

#include "op_table/op_spec.h"

namespace ember::optable {
namespace {

struct ConvCase {
  Shape x, w;
  Conv2dOptions opt;
  bool bias;
  std::string label;
};

Shape conv_out(const Shape& x, const Shape& w, const Conv2dOptions& o) {
  int64_t oh = (x[2] + 2 * o.padding[0] - o.dilation[0] * (w[2] - 1) - 1) / o.stride[0] + 1;
  int64_t ow = (x[3] + 2 * o.padding[1] - o.dilation[1] * (w[3] - 1) - 1) / o.stride[1] + 1;
  return {x[0], w[0], oh, ow};
}

// Calls f(x index, w index, y index) for every multiply-add of the convolution, in plain loops.
void each_tap(const Shape& x, const Shape& w, const Conv2dOptions& o,
              const std::function<void(const Shape&, const Shape&, const Shape&)>& f) {
  const Shape y = conv_out(x, w, o);
  const int64_t cg = w[1], mg = w[0] / o.groups;
  for_each_index(y, [&](const Shape& yi) {
    const int64_t gr = yi[1] / mg;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < w[2]; ++ki)
        for (int64_t kj = 0; kj < w[3]; ++kj) {
          int64_t iy = yi[2] * o.stride[0] - o.padding[0] + ki * o.dilation[0];
          int64_t ix = yi[3] * o.stride[1] - o.padding[1] + kj * o.dilation[1];
          if (iy < 0 || iy >= x[2] || ix < 0 || ix >= x[3]) continue;
          f({yi[0], gr * cg + ci, iy, ix}, {yi[1], ci, ki, kj}, yi);
        }
  });
}

Tensor ref_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dOptions& o) {
  Tensor y = zeros(conv_out(x.shape(), w.shape(), o), DType::Float64);
  each_tap(x.shape(), w.shape(), o, [&](const Shape& xi, const Shape& wi, const Shape& yi) {
    y.set(yi, y.at(yi) + x.at(xi) * w.at(wi));
  });
  if (b.defined()) for_each_index(y.shape(), [&](const Shape& i) { y.set(i, y.at(i) + b.at({i[1]})); });
  return y;
}

std::vector<ConvCase> conv_cases() {
  auto opt = [](Pair s, Pair p, Pair d, int64_t g) {
    Conv2dOptions o;
    o.stride = s, o.padding = p, o.dilation = d, o.groups = g;
    return o;
  };
  return {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, opt({1, 1}, {0, 0}, {1, 1}, 1), true, "3x2 kernel, bias"},
      {{1, 4, 9, 8}, {6, 2, 3, 3}, opt({2, 3}, {1, 2}, {2, 1}, 2), false, "2 groups, stride 2x3, padding 1x2, dilation 2x1"},
      {{2, 2, 5, 4}, {3, 2, 1, 1}, opt({1, 1}, {0, 0}, {1, 1}, 1), true, "1x1 (pointwise), strided input"},
      {{2, 3, 6, 5}, {3, 1, 3, 3}, opt({2, 2}, {1, 1}, {1, 1}, 3), true, "depthwise 3x3, stride 2, padding 1"},
      {{3, 2, 1, 11}, {2, 2, 1, 4}, opt({1, 1}, {0, 3}, {1, 2}, 1), false, "one row (conv1d), padding 3, dilation 2"},
      {{1, 1, 2, 2}, {1, 1, 2, 2}, opt({1, 1}, {0, 0}, {1, 1}, 1), true, "the kernel covers the input"},
  };
}

void conv_specs(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "conv2d";
  s.samples = [] {
    std::vector<Sample> v;
    uint64_t seed = 300;
    for (const ConvCase& c : conv_cases()) {
      Tensor x = c.label.find("strided") != std::string::npos ? strided64(c.x, seed) : rand64(c.x, seed);
      Tensor b = c.bias ? rand64({c.w[0]}, seed + 2) : Tensor();
      Conv2dOptions o = c.opt;
      Sample smp = make_sample(
          to_string(c.x) + " * " + to_string(c.w) + ", " + c.label, {x, rand64(c.w, seed + 1), b},
          [o](const std::vector<Tensor>& a) { return conv2d(a[0], a[1], a[2], o); },
          [o](const std::vector<Tensor>& a) { return ref_conv(a[0], a[1], a[2], o); }, 1e-10);
      v.push_back(smp);
      seed += 3;
    }
    return v;
  };
  s.bench = [](int64_t n) {
    Conv2dOptions o;
    o.padding = {1, 1};
    Sample smp = make_sample("bench", {rand64({n / 8 + 1, 32, 14, 14}, 1), rand64({64, 32, 3, 3}, 2), rand64({64}, 3)},
                             [o](const std::vector<Tensor>& a) { return conv2d(a[0], a[1], a[2], o); },
                             [o](const std::vector<Tensor>& a) { return ref_conv(a[0], a[1], a[2], o); });
    return smp;
  };
  s.f32_atol = 1e-4, s.f32_rtol = 1e-4;
  auto opt = [](int64_t stride, int64_t pad, int64_t groups) {
    Conv2dOptions o;
    o.stride = {stride, stride}, o.padding = {pad, pad}, o.groups = groups;
    return o;
  };
  s.errors = {
      {"a 3-d input", [] { conv2d(rand64({2, 3, 4}, 1), rand64({2, 3, 1, 1}, 2)); }, "conv2d: expected a 4-d input"},
      {"channels that do not match the weight", [] { conv2d(rand64({1, 3, 4, 4}, 1), rand64({2, 2, 1, 1}, 2)); },
       "conv2d: weight [2, 2, 1, 1] needs 3 input channels"},
      {"negative padding", [opt] { conv2d(rand64({1, 1, 4, 4}, 1), rand64({1, 1, 3, 3}, 2), Tensor(), opt(1, -1, 1)); },
       "conv2d: padding must be >= 0"},
      {"zero stride", [opt] { conv2d(rand64({1, 1, 4, 4}, 1), rand64({1, 1, 3, 3}, 2), Tensor(), opt(0, 0, 1)); },
       "conv2d: stride must be positive"},
      {"a kernel larger than the input", [] { conv2d(rand64({1, 1, 2, 2}, 1), rand64({1, 1, 3, 3}, 2)); },
       "conv2d: the kernel (3 x 3 with dilation) is larger than the padded input (2 x 2)"},
      {"groups not dividing the channels", [opt] { conv2d(rand64({1, 3, 4, 4}, 1), rand64({2, 1, 1, 1}, 2), Tensor(), opt(1, 0, 2)); },
       "conv2d: 2 groups need input channels and output channels divisible"},
      {"a bias of the wrong size", [] { conv2d(rand64({1, 1, 4, 4}, 1), rand64({2, 1, 1, 1}, 2), rand64({3}, 3)); },
       "conv2d: bias has shape [3]"},
      {"a float32 weight for a float64 input",
       [] { conv2d(rand64({1, 1, 4, 4}, 1), rand64({1, 1, 1, 1}, 2).to(DType::Float32)); }, "conv2d: weight is float32"},
      {"conv1d with a 4-d input", [] { conv1d(rand64({1, 1, 4, 4}, 1), rand64({1, 1, 1}, 2)); }, "conv1d: expected a 3-d input"},
      {"conv1d with a kernel larger than the input", [] { conv1d(rand64({1, 1, 3}, 1), rand64({1, 1, 5}, 2)); },
       "conv1d: the kernel (5 wide with dilation) is larger than the padded input (3)"},
  };
  out.push_back(s);

  OpSpec in;
  in.op = "conv2d_input_grad";
  in.samples = [] {
    std::vector<Sample> v;
    uint64_t seed = 340;
    for (const ConvCase& c : conv_cases()) {
      Conv2dOptions o = c.opt;
      Shape xs = c.x;
      v.push_back(make_sample(
          to_string(c.x) + " * " + to_string(c.w) + ", " + c.label, {rand64(conv_out(c.x, c.w, o), seed), rand64(c.w, seed + 1)},
          [o, xs](const std::vector<Tensor>& a) { return conv2d_input_grad(a[0], a[1], xs, o); },
          [o, xs](const std::vector<Tensor>& a) {
            Tensor dx = zeros(xs, DType::Float64);
            each_tap(xs, a[1].shape(), o, [&](const Shape& xi, const Shape& wi, const Shape& yi) {
              dx.set(xi, dx.at(xi) + a[0].at(yi) * a[1].at(wi));
            });
            return dx;
          },
          1e-10));
      seed += 2;
    }
    return v;
  };
  in.f32_atol = 1e-4, in.f32_rtol = 1e-4;
  in.errors = {{"an output gradient of the wrong shape",
                [] { conv2d_input_grad(rand64({1, 2, 3, 3}, 1), rand64({2, 1, 2, 2}, 2), {1, 1, 5, 5}, {}); },
                "conv2d_input_grad: the output gradient has shape [1, 2, 3, 3] but input [1, 1, 5, 5]"}};
  out.push_back(in);

  OpSpec wg;
  wg.op = "conv2d_weight_grad";
  wg.samples = [] {
    std::vector<Sample> v;
    uint64_t seed = 380;
    for (const ConvCase& c : conv_cases()) {
      Conv2dOptions o = c.opt;
      Shape ws = c.w;
      v.push_back(make_sample(
          to_string(c.x) + " * " + to_string(c.w) + ", " + c.label, {rand64(c.x, seed), rand64(conv_out(c.x, c.w, o), seed + 1)},
          [o, ws](const std::vector<Tensor>& a) { return conv2d_weight_grad(a[0], a[1], ws, o); },
          [o, ws](const std::vector<Tensor>& a) {
            Tensor dw = zeros(ws, DType::Float64);
            each_tap(a[0].shape(), ws, o, [&](const Shape& xi, const Shape& wi, const Shape& yi) {
              dw.set(wi, dw.at(wi) + a[0].at(xi) * a[1].at(yi));
            });
            return dw;
          },
          1e-10));
      seed += 2;
    }
    return v;
  };
  wg.f32_atol = 1e-4, wg.f32_rtol = 1e-4;
  wg.errors = {{"an output gradient of the wrong shape",
                [] { conv2d_weight_grad(rand64({1, 1, 5, 5}, 1), rand64({1, 2, 3, 3}, 2), {2, 1, 2, 2}, {}); },
                "conv2d_weight_grad: the output gradient has shape [1, 2, 3, 3]"}};
  out.push_back(wg);
}

struct PoolCase {
  Shape x;
  Pair k, s, p, d;
  bool strided;
};

Tensor ref_max_pool(const Tensor& x, const PoolCase& c) {
  Pair s = c.s[0] == 0 ? c.k : c.s;
  int64_t oh = (x.size(2) + 2 * c.p[0] - c.d[0] * (c.k[0] - 1) - 1) / s[0] + 1;
  int64_t ow = (x.size(3) + 2 * c.p[1] - c.d[1] * (c.k[1] - 1) - 1) / s[1] + 1;
  return ref_tensor({x.size(0), x.size(1), oh, ow}, [&](const Shape& i) {
    double best = -INFINITY;
    for (int64_t ki = 0; ki < c.k[0]; ++ki)
      for (int64_t kj = 0; kj < c.k[1]; ++kj) {
        int64_t iy = i[2] * s[0] - c.p[0] + ki * c.d[0], ix = i[3] * s[1] - c.p[1] + kj * c.d[1];
        if (iy >= 0 && iy < x.size(2) && ix >= 0 && ix < x.size(3)) best = std::max(best, x.at({i[0], i[1], iy, ix}));
      }
    return best;
  });
}

void max_pool_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "max_pool2d";
  s.samples = [] {
    std::vector<Sample> v;
    uint64_t seed = 420;
    for (PoolCase c : {PoolCase{{2, 3, 7, 6}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false},
                       PoolCase{{1, 2, 9, 8}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, false},
                       PoolCase{{2, 2, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
                       PoolCase{{1, 1, 1, 5}, {1, 3}, {1, 1}, {0, 1}, {1, 1}, false},
                       PoolCase{{2, 2, 8, 9}, {3, 2}, {2, 1}, {0, 0}, {1, 2}, false}}) {  // no padding, not 2x2
      Tensor x = c.strided ? strided64(c.x, seed) : rand64(c.x, seed);
      v.push_back(make_sample(
          to_string(c.x) + " kernel " + std::to_string(c.k[0]) + "x" + std::to_string(c.k[1]) + (c.strided ? ", strided" : ""),
          {x}, [c](const std::vector<Tensor>& a) { return max_pool2d(a[0], c.k, c.s, c.p, c.d); },
          [c](const std::vector<Tensor>& a) { return ref_max_pool(a[0], c); }, 0));
      ++seed;
    }
    return v;
  };
  s.bench = [](int64_t n) {
    PoolCase c{{n / 8 + 1, 32, 28, 28}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false};
    return make_sample("bench", {rand64(c.x, 1)}, [c](const std::vector<Tensor>& a) { return max_pool2d(a[0], c.k); },
                       [c](const std::vector<Tensor>& a) { return ref_max_pool(a[0], c); });
  };
  s.f32_atol = 1e-6;
  s.errors = {
      {"a 3-d input", [] { max_pool2d(rand64({2, 4, 4}, 1), {2, 2}); }, "max_pool2d: expected a 4-d input"},
      {"a zero kernel", [] { max_pool2d(rand64({1, 1, 4, 4}, 1), {0, 2}); }, "max_pool2d: kernel size must be positive"},
      {"a negative stride", [] { max_pool2d(rand64({1, 1, 4, 4}, 1), {2, 2}, {-1, 1}); }, "max_pool2d: stride must be positive"},
      {"padding over half the kernel", [] { max_pool2d(rand64({1, 1, 4, 4}, 1), {2, 2}, {1, 1}, {2, 0}); },
       "max_pool2d: padding must be >= 0 and at most half"},
      {"a kernel larger than the input", [] { max_pool2d(rand64({1, 1, 2, 2}, 1), {3, 3}); },
       "max_pool2d: the kernel [3, 3] is larger than the padded input [2, 2]"},
  };
  out.push_back(s);
}

void batch_norm_spec(std::vector<OpSpec>& out) {
  OpSpec s;
  s.op = "batch_norm";
  s.samples = [] {
    std::vector<Sample> v;
    struct C {
      Shape x;
      bool weight, bias;
    };
    uint64_t seed = 460;
    for (C c : {C{{4, 3, 5, 2}, true, true}, C{{6, 4}, true, false}, C{{3, 2, 7}, false, false}, C{{2, 5, 1, 1}, true, true}}) {
      int64_t ch = c.x[1];
      std::vector<Tensor> in = {rand64(c.x, seed), c.weight ? rand64({ch}, seed + 1) : Tensor(),
                                c.bias ? rand64({ch}, seed + 2) : Tensor()};
      seed += 3;
      v.push_back(make_sample(
          to_string(c.x) + (c.weight ? " weight" : "") + (c.bias ? " bias" : ""), in,
          [](const std::vector<Tensor>& a) { return batch_norm(a[0], Tensor(), Tensor(), a[1], a[2], true, 0.1, 1e-5); },
          [](const std::vector<Tensor>& a) {
            const Tensor& x = a[0];
            const int64_t ch = x.size(1);
            std::vector<double> sum(size_t(ch), 0), sq(size_t(ch), 0);
            const double count = double(x.numel() / ch);
            for_each_index(x.shape(), [&](const Shape& i) { sum[size_t(i[1])] += x.at(i) / count; });
            for_each_index(x.shape(), [&](const Shape& i) {
              double d = x.at(i) - sum[size_t(i[1])];
              sq[size_t(i[1])] += d * d / count;
            });
            return ref_tensor(x.shape(), [&](const Shape& i) {
              size_t c = size_t(i[1]);
              double y = (x.at(i) - sum[c]) / std::sqrt(sq[c] + 1e-5);
              if (a[1].defined()) y *= a[1].at({i[1]});
              if (a[2].defined()) y += a[2].at({i[1]});
              return y;
            });
          },
          1e-9));
    }
    return v;
  };
  s.bench = [s](int64_t n) {
    Sample smp = s.samples()[0];
    smp.inputs = {rand64({n / 8 + 1, 32, 28, 28}, 1), rand64({32}, 2), rand64({32}, 3)};
    return smp;
  };
  s.f32_atol = 1e-4;
  s.errors = {
      {"a 1-d input", [] { batch_norm(rand64({4}, 1), Tensor(), Tensor(), Tensor(), Tensor(), true); },
       "batch_norm: expected an input (N, C, ...) of at least 2 dims"},
      {"a weight of the wrong size", [] { batch_norm(rand64({4, 3}, 1), Tensor(), Tensor(), rand64({2}, 2), Tensor(), true); },
       "batch_norm: weight has shape [2] but the input [4, 3] needs [3]"},
      {"one value per channel in training", [] { batch_norm(rand64({1, 3}, 1), Tensor(), Tensor(), Tensor(), Tensor(), true); },
       "batch_norm: training needs more than one value per channel"},
      {"inference without running statistics",
       [] { batch_norm(rand64({4, 3}, 1), Tensor(), Tensor(), Tensor(), Tensor(), false); },
       "batch_norm: inference mode needs running_mean"},
      {"momentum above 1", [] { batch_norm(rand64({4, 3}, 1), Tensor(), Tensor(), Tensor(), Tensor(), true, 1.5); },
       "batch_norm: momentum must be in [0, 1]"},
  };
  out.push_back(s);
}

}  // namespace

void add_conv_pool_norm_specs(std::vector<OpSpec>& out) {
  conv_specs(out);
  max_pool_spec(out);
  batch_norm_spec(out);
}

}  // namespace ember::optable
