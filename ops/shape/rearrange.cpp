// Compositions: each op is a few views, copies and index_selects, so the backward passes are those
// ops' rules (flip's is a flip, roll's a roll back, repeat's a sum over the tiles, pad's a slice).
#include "ops/shape/rearrange.h"

#include "ops/elementwise/elementwise.h"
#include "ops/select/indexing.h"
#include "ops/shape/shape_ops.h"

namespace ember {
namespace {

Tensor positions(int64_t from, int64_t step, int64_t count) {
  std::vector<int64_t> v(size_t(std::max<int64_t>(count, 0)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = from + step * int64_t(i);
  return from_vector(v, {int64_t(v.size())});
}

// x with (i - j) compared to k over the last two dims: keep where lower ? j - i <= k : j - i >= k.
Tensor triangle(const char* op, const Tensor& x, int64_t k, bool lower) {
  EMBER_CHECK(x.defined() && x.dim() >= 2, op, ": expected a tensor with at least 2 dims, got ",
              x.defined() ? to_string(x.shape()) : "undefined");
  int64_t rows = x.size(-2), cols = x.size(-1);
  Tensor mask = zeros({rows, cols}, DType::Int64);
  int64_t* m = mask.data<int64_t>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[i * cols + j] = lower ? (j - i <= k) : (j - i >= k);
  return where(mask, x, zeros({}, x.dtype(), x.device()));
}

}  // namespace

Tensor flip(const Tensor& x, const Shape& dims) {
  EMBER_CHECK(x.defined(), "flip: input is undefined");
  Tensor out = x;
  std::vector<bool> seen(size_t(x.dim()), false);
  for (int64_t dim : dims) {
    int64_t d = wrap_dim(dim, x.dim(), "flip");
    EMBER_CHECK(!seen[size_t(d)], "flip: dim ", d, " appears twice in ", to_string(dims));
    seen[size_t(d)] = true;
    int64_t n = x.size(d);
    if (n > 1) out = index_select(out, d, positions(n - 1, -1, n));
  }
  return out;
}

Tensor roll(const Tensor& x, int64_t shift, int64_t dim) {
  EMBER_CHECK(x.defined() && x.dim() > 0, "roll: input must be defined and at least 1-d");
  int64_t d = wrap_dim(dim, x.dim(), "roll");
  int64_t n = x.size(d);
  if (n == 0) return x;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return concat({slice(x, d, n - s, n), slice(x, d, 0, n - s)}, d);
}

Tensor repeat(const Tensor& x, const Shape& repeats) {
  EMBER_CHECK(x.defined(), "repeat: input is undefined");
  EMBER_CHECK(int64_t(repeats.size()) >= x.dim(), "repeat: ", repeats.size(), " repeats for a tensor of shape ",
              to_string(x.shape()), " (need at least one per dim)");
  for (int64_t r : repeats) EMBER_CHECK(r >= 0, "repeat: negative repeat count in ", to_string(repeats));
  size_t lead = repeats.size() - size_t(x.dim());
  // (s0, s1, ...) viewed as (1, s0, 1, s1, ...), expanded to (r0, s0, r1, s1, ...), then merged.
  Shape interleaved, expanded, out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    int64_t size = i < lead ? 1 : x.size(int64_t(i - lead));
    interleaved.insert(interleaved.end(), {1, size});
    expanded.insert(expanded.end(), {repeats[i], size});
    out.push_back(repeats[i] * size);
  }
  return reshape(expand(reshape(x, interleaved), expanded), out);
}

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, diagonal, false); }

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  const char* op = mode == PadMode::Constant ? "pad (constant)" : "pad (reflect)";
  EMBER_CHECK(x.defined(), op, ": input is undefined");
  EMBER_CHECK(pads.size() % 2 == 0 && int64_t(pads.size()) / 2 <= x.dim(), op, ": ", pads.size(),
              " pad sizes for a tensor of shape ", to_string(x.shape()), " (need pairs, at most two per dim)");
  Tensor out = x;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    int64_t d = x.dim() - 1 - int64_t(k), before = pads[2 * k], after = pads[2 * k + 1], n = x.size(d);
    EMBER_CHECK(before >= 0 && after >= 0, op, ": negative padding ", before, ", ", after, " for dim ", d, " of shape ",
                to_string(x.shape()));
    if (before == 0 && after == 0) continue;
    std::vector<Tensor> parts;
    if (mode == PadMode::Constant) {
      auto filled = [&](int64_t len) {
        Shape s = out.shape();
        s[size_t(d)] = len;
        return full(s, value, x.dtype(), x.device());
      };
      if (before > 0) parts.push_back(filled(before));
      parts.push_back(out);
      if (after > 0) parts.push_back(filled(after));
    } else {
      EMBER_CHECK(before < n && after < n, op, ": padding ", before, ", ", after, " must be below the size ", n, " of dim ",
                  d, " of shape ", to_string(x.shape()));
      if (before > 0) parts.push_back(index_select(out, d, positions(before, -1, before)));
      parts.push_back(out);
      if (after > 0) parts.push_back(index_select(out, d, positions(n - 2, -1, after)));
    }
    out = concat(parts, d);
  }
  return out;
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (m == -1) m = n;
  EMBER_CHECK(n >= 0 && m >= 0, "eye: sizes must be non-negative, got ", n, " x ", m);
  Tensor out = zeros({n, m}, DType::Float64);
  double* p = out.data<double>();
  for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = 1;
  return cast(out, dtype);
}

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  EMBER_CHECK(steps >= 0, "linspace: steps must be non-negative, got ", steps);
  Tensor out = empty({steps}, DType::Float64);
  double* p = out.data<double>();
  double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  // Each half counts from its own end, so both endpoints are exact (as PyTorch and NumPy).
  for (int64_t i = 0; i < steps; ++i) p[i] = i < steps / 2 ? start + step * double(i) : end - step * double(steps - 1 - i);
  if (steps == 1) p[0] = start;
  return cast(out, dtype);
}

}  // namespace ember
