// SpGEMM C = A B, Gustavson's row-wise algorithm: row i of C is the sum over the nonzeros a_ik of
// row i of A of a_ik times row k of B. Two passes over the products (symbolic, then numeric)
// let C be allocated exactly once, and both passes run in parallel over rows.
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
void spgemm(const CsrPattern& a, const T* av, const CsrPattern& b, const T* bv, CsrPattern& c, std::vector<T>& cv,
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

  // Symbolic pass: marker[j] == i means column j already seen in row i.
  t0 = Clock::now();
  std::vector<int64_t> count(size_t(rows + 1), 0);
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> marker(size_t(cols), -1);
    for (int64_t i = lo; i < hi; ++i) {
      int64_t n = 0;
      for (int32_t k = arp[i]; k < arp[i + 1]; ++k)
        for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q)
          if (marker[size_t(bci[q])] != int32_t(i)) {
            marker[size_t(bci[q])] = int32_t(i);
            ++n;
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
  cv.resize(size_t(count[size_t(rows)]));
  prof.alloc_ms = ms_since(t0);

  // Numeric pass: accumulate row i in acc[], remember which columns it touched, then write them
  // sorted. Sorting costs O(r log r) for r nonzeros; once a row covers more than an eighth of the
  // columns, scanning the marker array in order (O(cols)) is cheaper and sorted for free.
  t0 = Clock::now();
  int32_t* cci = c.col_idx.data();
  T* cvals = cv.data();
  const int32_t* crp = c.row_ptr.data();
  parallel_rows(work.data(), rows, kGrain, [&](int64_t lo, int64_t hi) {
    std::vector<int32_t> marker(size_t(cols), -1);
    std::vector<T> acc(static_cast<size_t>(cols));
    for (int64_t i = lo; i < hi; ++i) {
      const int32_t start = crp[i], end = crp[i + 1];
      int32_t pos = start;
      for (int32_t k = arp[i]; k < arp[i + 1]; ++k) {
        const T aik = av[k];
        for (int32_t q = brp[aci[k]]; q < brp[aci[k] + 1]; ++q) {
          const int32_t j = bci[q];
          if (marker[size_t(j)] != int32_t(i)) {
            marker[size_t(j)] = int32_t(i);
            cci[pos++] = j;
            acc[size_t(j)] = aik * bv[q];
          } else {
            acc[size_t(j)] += aik * bv[q];
          }
        }
      }
      if (int64_t(end - start) * 8 > cols) {
        int32_t w = start;
        for (int64_t j = 0; j < cols; ++j)
          if (marker[size_t(j)] == int32_t(i)) cci[w++] = int32_t(j);
      } else {
        std::sort(cci + start, cci + end);
      }
      for (int32_t p = start; p < end; ++p) cvals[p] = acc[size_t(cci[p])];
    }
  });
  prof.numeric_ms = ms_since(t0);
  if (profile) *profile = prof;
}

template void spgemm<float>(const CsrPattern&, const float*, const CsrPattern&, const float*, CsrPattern&,
                            std::vector<float>&, SpgemmProfile*);
template void spgemm<double>(const CsrPattern&, const double*, const CsrPattern&, const double*, CsrPattern&,
                             std::vector<double>&, SpgemmProfile*);

}  // namespace ember::sparse::cpu
