// SpGEMM C = A B, Gustavson's row-wise algorithm: row i of C is the sum over the nonzeros a_ik of
// row i of A of a_ik times row k of B. Two passes over the products (symbolic, then numeric)
// let C be allocated exactly once, and both passes run in parallel over rows, split so that each
// thread gets about the same number of products. Small products take one pass instead: each row
// goes to a slot as long as its largest possible count, and the rows are moved together afterwards.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "framework/core/error.h"
#include "framework/core/storage.h"
#include "ops/sparse/cpu/kernels.h"
#include "ops/sparse/cpu/partition.h"

namespace ember::sparse::cpu {

namespace {
constexpr int64_t kGrain = 1 << 14;  // products below which one thread does the whole product

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Each row is handled in one of two modes, whichever touches less memory:
//  - bitset: a bit per column of C marks the columns seen; reading the row back is a scan over
//    cols / 64 words that yields the columns already sorted. Used when that scan is no longer
//    than the row itself (words <= the row's nonzeros, or its products where those are unknown).
//  - list: marker[j] == i says column j was seen in row i; new columns go to a list that is
//    sorted afterwards (insertion sort for short rows).
// Both are branch-free in the inner loop: whether a column is new is unpredictable, and a
// mispredicted branch per product cost more than the arithmetic. Both add the products of a
// column in the same order, so the mode changes no value.
template <class T>
class RowAccumulator {
 public:
  RowAccumulator(const CsrPattern& a, const T* av, const CsrPattern& b, const T* bv)
      : arp_(a.row_ptr.data()), aci_(a.col_idx.data()), brp_(b.row_ptr.data()), bci_(b.col_idx.data()), av_(av),
        bv_(bv), words_((b.cols + 63) / 64), marker_(size_t(b.cols), -1), list_(size_t(b.cols) + 1),
        bits_(size_t(words_), 0), acc_(size_t(b.cols), T(0)) {}

  // Nonzeros of row i of C (the symbolic pass).
  int64_t count(int64_t i, bool bitset) {
    int64_t n = 0;
    if (bitset) {
      for (int32_t k = arp_[i]; k < arp_[i + 1]; ++k)
        for (int32_t q = brp_[aci_[k]]; q < brp_[aci_[k] + 1]; ++q)
          bits_[size_t(bci_[q] >> 6)] |= uint64_t(1) << (bci_[q] & 63);
      for (int64_t w = 0; w < words_; ++w) {
        n += __builtin_popcountll(bits_[size_t(w)]);
        bits_[size_t(w)] = 0;
      }
    } else {
      const int32_t stamp = int32_t(i);
      for (int32_t k = arp_[i]; k < arp_[i + 1]; ++k)
        for (int32_t q = brp_[aci_[k]]; q < brp_[aci_[k] + 1]; ++q) {
          n += marker_[size_t(bci_[q])] != stamp;
          marker_[size_t(bci_[q])] = stamp;
        }
    }
    return n;
  }

  // Row i of C into ci/cv, columns ascending; returns its nonzeros. The accumulator is all zeros
  // between rows (each row clears what it touched), so every product is a plain acc[j] += a * b.
  int32_t row(int64_t i, bool bitset, int32_t* ci, T* cv) {
    int32_t p = 0;
    if (bitset) {
      for (int32_t k = arp_[i]; k < arp_[i + 1]; ++k) {
        const T aik = av_[k];
        for (int32_t q = brp_[aci_[k]]; q < brp_[aci_[k] + 1]; ++q) {
          const int32_t j = bci_[q];
          acc_[size_t(j)] += aik * bv_[q];
          bits_[size_t(j >> 6)] |= uint64_t(1) << (j & 63);
        }
      }
      for (int64_t w = 0; w < words_; ++w) {
        uint64_t m = bits_[size_t(w)];
        bits_[size_t(w)] = 0;
        while (m) {
          const int32_t j = int32_t(w * 64 + __builtin_ctzll(m));
          ci[p] = j;
          cv[p++] = acc_[size_t(j)];
          acc_[size_t(j)] = T(0);
          m &= m - 1;
        }
      }
      return p;
    }
    const int32_t stamp = int32_t(i);
    for (int32_t k = arp_[i]; k < arp_[i + 1]; ++k) {
      const T aik = av_[k];
      for (int32_t q = brp_[aci_[k]]; q < brp_[aci_[k] + 1]; ++q) {
        const int32_t j = bci_[q];
        acc_[size_t(j)] += aik * bv_[q];
        list_[size_t(p)] = j;  // list has cols + 1 slots, so this write is always in range
        p += marker_[size_t(j)] != stamp;
        marker_[size_t(j)] = stamp;
      }
    }
    int32_t* l = list_.data();
    if (p <= 32) {
      for (int32_t x = 1; x < p; ++x) {
        const int32_t v = l[x];
        int32_t y = x;
        for (; y > 0 && l[y - 1] > v; --y) l[y] = l[y - 1];
        l[y] = v;
      }
    } else {
      std::sort(l, l + p);
    }
    for (int32_t x = 0; x < p; ++x) {
      ci[x] = l[x];
      cv[x] = acc_[size_t(l[x])];
      acc_[size_t(l[x])] = T(0);
    }
    return p;
  }

 private:
  const int32_t *arp_, *aci_, *brp_, *bci_;
  const T *av_, *bv_;
  int64_t words_;
  std::vector<int32_t> marker_, list_;
  std::vector<uint64_t> bits_;
  std::vector<T> acc_;
};
}  // namespace

template <class T>
void spgemm(const CsrPattern& a, const T* av, const CsrPattern& b, const T* bv, CsrPattern& c, Tensor& cv,
            SpgemmProfile* profile, int64_t one_pass_slots) {
  EMBER_CHECK(a.cols == b.rows, "spgemm: inner dimensions differ, [", a.rows, ", ", a.cols, "] @ [", b.rows, ", ",
              b.cols, "]");
  const int64_t rows = a.rows, cols = b.cols, words = (cols + 63) / 64;
  const int32_t *arp = a.row_ptr.data(), *aci = a.col_idx.data();
  const int32_t *brp = b.row_ptr.data();
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
  const int64_t products = work[size_t(rows)];
  prof.products = products;
  prof.work_ms = ms_since(t0);
  auto row_products = [&](int64_t i) { return work[size_t(i + 1)] - work[size_t(i)]; };
  std::vector<int64_t> count(size_t(rows + 1), 0);
  c.rows = rows;
  c.cols = cols;
  c.row_ptr.resize(size_t(rows + 1));
  // count (each row's nonzeros) -> its prefix sum -> C's row pointers, then C's arrays.
  auto place_rows_and_allocate = [&] {
    auto t = Clock::now();
    for (int64_t i = 0; i < rows; ++i) count[size_t(i + 1)] += count[size_t(i)];
    EMBER_CHECK(count[size_t(rows)] <= std::numeric_limits<int32_t>::max(), "spgemm: the product has ",
                count[size_t(rows)], " nonzeros, beyond the int32 index limit");
    for (int64_t i = 0; i <= rows; ++i) c.row_ptr[size_t(i)] = int32_t(count[size_t(i)]);
    prof.scan_ms = ms_since(t);
    t = Clock::now();
    c.col_idx.resize(size_t(count[size_t(rows)]));
    cv = empty({count[size_t(rows)]}, dtype_of<T>::value);
    prof.alloc_ms += ms_since(t);
  };

  // A row of C has at most min(products, cols) nonzeros: its slot in the one-pass mode.
  std::vector<int64_t> slot(size_t(rows + 1), 0);
  for (int64_t i = 0; i < rows; ++i) slot[size_t(i + 1)] = slot[size_t(i)] + std::min(row_products(i), cols);
  const int64_t slots = slot[size_t(rows)];

  if (slots <= one_pass_slots) {
    // One pass: row i goes to [slot[i], slot[i + 1]) of an upper-bound buffer, then the rows move
    // to their places in C. It saves the symbolic pass, about a third of the products' time, for
    // one copy of C.
    prof.one_pass = true;
    t0 = Clock::now();
    // Values, then column indices, in one block of the caching allocator: no zero fill, and no
    // fresh pages on the calls after the first (with a zero-filled std::vector for the indices,
    // a 172 MB buffer made the one-pass mode 2x slower than two passes).
    const size_t entries = size_t(std::max<int64_t>(slots, 1));
    Storage buffer(entries * (sizeof(T) + sizeof(int32_t)), Device::CPU);
    T* slot_v = static_cast<T*>(buffer.data());
    int32_t* slot_ci = reinterpret_cast<int32_t*>(slot_v + entries);
    prof.alloc_ms = ms_since(t0);
    t0 = Clock::now();
    parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
      RowAccumulator<T> acc(a, av, b, bv);
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t s = slot[size_t(i)];
        count[size_t(i + 1)] = acc.row(i, words <= row_products(i), slot_ci + s, slot_v + s);
      }
    });
    prof.numeric_ms = ms_since(t0);
    place_rows_and_allocate();
    int32_t* cci = c.col_idx.data();
    T* cvals = cv.data<T>();
    t0 = Clock::now();
    parallel_rows(count.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const size_t n = size_t(count[size_t(i + 1)] - count[size_t(i)]);
        if (n == 0) continue;
        std::memcpy(cci + count[size_t(i)], slot_ci + slot[size_t(i)], n * sizeof(int32_t));
        std::memcpy(cvals + count[size_t(i)], slot_v + slot[size_t(i)], n * sizeof(T));
      }
    });
    prof.compact_ms = ms_since(t0);
    if (profile) *profile = prof;
    return;
  }

  // Symbolic pass: each row's nonzero count.
  t0 = Clock::now();
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    RowAccumulator<T> acc(a, av, b, bv);
    for (int64_t i = lo; i < hi; ++i) count[size_t(i + 1)] = acc.count(i, words <= row_products(i));
  });
  prof.symbolic_ms = ms_since(t0);
  place_rows_and_allocate();

  // Numeric pass, each row straight into its place in C.
  t0 = Clock::now();
  int32_t* cci = c.col_idx.data();
  T* cvals = cv.data<T>();
  const int32_t* crp = c.row_ptr.data();
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    RowAccumulator<T> acc(a, av, b, bv);
    for (int64_t i = lo; i < hi; ++i) acc.row(i, words <= crp[i + 1] - crp[i], cci + crp[i], cvals + crp[i]);
  });
  prof.numeric_ms = ms_since(t0);
  if (profile) *profile = prof;
}

template void spgemm<float>(const CsrPattern&, const float*, const CsrPattern&, const float*, CsrPattern&, Tensor&,
                            SpgemmProfile*, int64_t);
template void spgemm<double>(const CsrPattern&, const double*, const CsrPattern&, const double*, CsrPattern&,
                             Tensor&, SpgemmProfile*, int64_t);

}  // namespace ember::sparse::cpu
