// SpGEMM C = A B, Gustavson's row-wise algorithm: row i of C is the sum over the nonzeros a_ik of
// row i of A of a_ik times row k of B. Two passes over the products (symbolic, then numeric)
// let C be allocated exactly once, and both passes run in parallel over rows, split so that each
// thread gets about the same number of products.
#include <algorithm>
#include <chrono>
#include <limits>

#include "framework/error.h"
#include "ops/sparse/cpu/kernels.h"
#include "ops/sparse/cpu/partition.h"

namespace ember::sparse::cpu {

namespace {
constexpr int64_t kGrain = 1 << 14;  // products below which one thread does the whole product

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
}  // namespace

template <class T>
void spgemm(const CsrPattern& a, const T* av, const CsrPattern& b, const T* bv, CsrPattern& c, Tensor& cv,
            SpgemmProfile* profile) {
  EMBER_CHECK(a.cols == b.rows, "spgemm: inner dimensions differ, [", a.rows, ", ", a.cols, "] @ [", b.rows, ", ",
              b.cols, "]");
  const int64_t rows = a.rows, cols = b.cols;
  const int32_t *arp = a.row_ptr.data(), *aci = a.col_idx.data();
  const int32_t *brp = b.row_ptr.data(), *bci = b.col_idx.data();
  SpgemmProfile prof;
  auto t0 = Clock::now();

  // Products per row (an upper bound on the row's nonzeros), prefix-summed to balance both passes.
  std::vector<int64_t> work(size_t(rows + 1), 0);
  parallel_rows(arp, rows, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      int64_t w = 0;
      for (int32_t k = arp[i]; k < arp[i + 1]; ++k) w += brp[aci[k] + 1] - brp[aci[k]];
      work[size_t(i + 1)] = w;
    }
  });
  for (int64_t i = 0; i < rows; ++i) work[size_t(i + 1)] += work[size_t(i)];
  prof.products = work[size_t(rows)];
  prof.work_ms = ms_since(t0);

  // Each row is handled in one of two modes, whichever touches less memory:
  //  - bitset: a bit per column of C marks the columns seen; reading the row back is a scan over
  //    cols / 64 words that yields the columns already sorted. Used when that scan is no longer
  //    than the row itself (words <= the row's products in the symbolic pass, <= its nonzeros in
  //    the numeric one).
  //  - list: marker[j] == i says column j was seen in row i; new columns go to a list that is
  //    sorted afterwards (insertion sort for short rows).
  // Both are branch-free in the inner loop: whether a column is new is unpredictable, and a
  // mispredicted branch per product cost more than the arithmetic.
  const int64_t words = (cols + 63) / 64;

  // Symbolic pass: each row's nonzero count.
  t0 = Clock::now();
  std::vector<int64_t> count(size_t(rows + 1), 0);
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> marker(size_t(cols), -1);
    std::vector<uint64_t> bits(size_t(words), 0);
    for (int64_t i = lo; i < hi; ++i) {
      int64_t n = 0;
      if (words <= work[size_t(i + 1)] - work[size_t(i)]) {
        for (int32_t k = arp[i]; k < arp[i + 1]; ++k)
          for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q) bits[size_t(bci[q] >> 6)] |= uint64_t(1) << (bci[q] & 63);
        for (int64_t w = 0; w < words; ++w) {
          n += __builtin_popcountll(bits[size_t(w)]);
          bits[size_t(w)] = 0;
        }
      } else {
        const int32_t stamp = int32_t(i);
        for (int32_t k = arp[i]; k < arp[i + 1]; ++k)
          for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q) {
            n += marker[size_t(bci[q])] != stamp;
            marker[size_t(bci[q])] = stamp;
          }
      }
      count[size_t(i + 1)] = n;
    }
  });
  prof.symbolic_ms = ms_since(t0);

  t0 = Clock::now();
  for (int64_t i = 0; i < rows; ++i) count[size_t(i + 1)] += count[size_t(i)];
  EMBER_CHECK(count[size_t(rows)] <= std::numeric_limits<int32_t>::max(), "spgemm: the product has ",
              count[size_t(rows)], " nonzeros, beyond the int32 index limit");
  c.rows = rows;
  c.cols = cols;
  c.row_ptr.resize(size_t(rows + 1));
  for (int64_t i = 0; i <= rows; ++i) c.row_ptr[size_t(i)] = int32_t(count[size_t(i)]);
  prof.scan_ms = ms_since(t0);

  t0 = Clock::now();
  c.col_idx.resize(size_t(count[size_t(rows)]));
  cv = empty({count[size_t(rows)]}, dtype_of<T>::value);
  prof.alloc_ms = ms_since(t0);

  // Numeric pass: acc[] holds row i's sums and is all zeros between rows (each row clears what it
  // touched), so every product is a plain acc[j] += a * b.
  t0 = Clock::now();
  int32_t* cci = c.col_idx.data();
  T* cvals = cv.data<T>();
  const int32_t* crp = c.row_ptr.data();
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> marker(size_t(cols), -1), list(size_t(cols) + 1);
    std::vector<uint64_t> bits(size_t(words), 0);
    std::vector<T> acc(static_cast<size_t>(cols), T(0));
    for (int64_t i = lo; i < hi; ++i) {
      const int32_t start = crp[i], end = crp[i + 1];
      if (words <= end - start) {
        for (int32_t k = arp[i]; k < arp[i + 1]; ++k) {
          const T aik = av[k];
          for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q) {
            const int32_t j = bci[q];
            acc[size_t(j)] += aik * bv[q];
            bits[size_t(j >> 6)] |= uint64_t(1) << (j & 63);
          }
        }
        int32_t p = start;
        for (int64_t w = 0; w < words; ++w) {
          uint64_t m = bits[size_t(w)];
          bits[size_t(w)] = 0;
          while (m) {
            const int32_t j = int32_t(w * 64 + __builtin_ctzll(m));
            cci[p] = j;
            cvals[p++] = acc[size_t(j)];
            acc[size_t(j)] = T(0);
            m &= m - 1;
          }
        }
      } else {
        const int32_t stamp = int32_t(i);
        int32_t n = 0;
        for (int32_t k = arp[i]; k < arp[i + 1]; ++k) {
          const T aik = av[k];
          for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q) {
            const int32_t j = bci[q];
            acc[size_t(j)] += aik * bv[q];
            list[size_t(n)] = j;  // list has cols + 1 slots, so this write is always in range
            n += marker[size_t(j)] != stamp;
            marker[size_t(j)] = stamp;
          }
        }
        int32_t* l = list.data();
        if (n <= 32) {
          for (int32_t x = 1; x < n; ++x) {
            const int32_t v = l[x];
            int32_t y = x;
            for (; y > 0 && l[y - 1] > v; --y) l[y] = l[y - 1];
            l[y] = v;
          }
        } else {
          std::sort(l, l + n);
        }
        for (int32_t x = 0; x < n; ++x) {
          cci[start + x] = l[x];
          cvals[start + x] = acc[size_t(l[x])];
          acc[size_t(l[x])] = T(0);
        }
      }
    }
  });
  prof.numeric_ms = ms_since(t0);
  if (profile) *profile = prof;
}

template void spgemm<float>(const CsrPattern&, const float*, const CsrPattern&, const float*, CsrPattern&, Tensor&,
                            SpgemmProfile*);
template void spgemm<double>(const CsrPattern&, const double*, const CsrPattern&, const double*, CsrPattern&, Tensor&,
                             SpgemmProfile*);

}  // namespace ember::sparse::cpu
