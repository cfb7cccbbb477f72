#include "framework/core/shape.h"

#include <cstdint>

#include "framework/core/error.h"
#include "framework/core/max_rank.h"

namespace ember {

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  EMBER_CHECK(a >= 0 && b >= 0, what, ": sizes must be non-negative, got ", a, " and ", b);
  EMBER_CHECK(!__builtin_mul_overflow(a, b, &out), what, ": ", a, " x ", b,
              " overflows 64 bits (the largest size Ember accepts is 2^63-1)");
  return out;
}

int64_t checked_bytes(int64_t numel, size_t itemsize, const char* what) {
  int64_t out = 0;
  EMBER_CHECK(numel >= 0, what, ": negative element count ", numel);
  EMBER_CHECK(itemsize <= size_t(INT64_MAX) && !__builtin_mul_overflow(numel, int64_t(itemsize), &out), what, ": ",
              numel, " elements of ", itemsize, " bytes overflow 64 bits (at most 2^63-1 bytes)");
  return out;
}

int64_t numel(const Shape& s) {
  // Negative sizes reach here only from shapes still being checked (views with -1 report them
  // first); their product is kept as is, only its magnitude is checked.
  int64_t n = 1;
  for (int64_t d : s)
    EMBER_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", to_string(s),
                " has more elements than fit in 64 bits (at most 2^63-1)");
  return n;
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

void check_rank(size_t rank, const char* what) {
  EMBER_CHECK(rank <= size_t(kMaxRank), what, ": a shape of ", rank, " dimensions is too many (at most ", kMaxRank,
              ", NumPy's limit)");
}

Shape contiguous_strides(const Shape& s) {
  check_rank(s.size(), "shape");  // every new tensor's strides come from here
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    // A zero size further in would hide an overflow from numel(); the strides must fit on their own.
    EMBER_CHECK(s[i] >= 0, "shape ", to_string(s), " has a negative size (expected sizes >= 0)");
    EMBER_CHECK(i == 0 || !__builtin_mul_overflow(acc, s[i], &acc), "shape ", to_string(s),
                ": its strides overflow 64 bits (expected at most 2^63-1 elements per dimension step)");
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
