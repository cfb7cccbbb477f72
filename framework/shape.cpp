#include "framework/shape.h"

#include "framework/error.h"

namespace ember {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", to_string(a), " and ", to_string(b),
                " do not broadcast (dimension ", i, " is ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  EMBER_CHECK(dim >= lo && dim <= hi, op, ": dim ", dim, " is out of range for a tensor of ", ndim,
              " dimensions (expected ", lo, " to ", hi, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

}  // namespace ember
