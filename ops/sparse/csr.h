// Sparse matrices in compressed sparse row (CSR) form.
//
// Design: the index arrays (the *pattern*) are held apart from the values. The pattern is
// immutable and shared; the values are an ordinary 1-d Tensor (float32, or float64 for gradcheck),
// so autograd can treat them as a differentiable input of spmm while the pattern stays constant.
//
// Indices are int32, stored in plain vectors (Ember's DType has no int32). Why int32 and not int64:
// an SpMV streams 4 value bytes and 4 index bytes per nonzero; int64 indices would make that 12,
// i.e. 50% more memory traffic for a memory-bound kernel. cuSPARSE's SpGEMM accepts only 32-bit
// indices, and SciPy uses int32 for these same matrices. The price: rows, columns and nonzeros are
// limited to 2^31 - 1, which every constructor checks. User-facing constructors take int64.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

struct CsrTranspose;

// std::vector storage drawn from Ember's caching CPU allocator, with elements left uninitialised
// by resize(). Why: a kernel that produces a CSR matrix (SpGEMM, conversions) writes every index
// itself, in parallel; zero-filling first would touch every page once more on one thread, and
// fresh pages cost ~11 us per 4 KiB on these machines while cached blocks cost nothing.
template <class T>
struct CachedAllocator {
  using value_type = T;
  CachedAllocator() = default;
  template <class U>
  CachedAllocator(const CachedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocator(Device::CPU).allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { allocator(Device::CPU).deallocate(p, n * sizeof(T)); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;  // default-init: no zeroing
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const CachedAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CachedAllocator<U>&) const { return false; }
};
using IndexVector = std::vector<int32_t, CachedAllocator<int32_t>>;

// The structure of a CSR matrix: row i holds the columns col_idx[row_ptr[i] .. row_ptr[i+1]),
// strictly increasing. Every CsrPattern that exists satisfies these invariants.
struct CsrPattern {
  int64_t rows = 0, cols = 0;
  IndexVector row_ptr;  // rows + 1 entries, row_ptr[0] == 0, non-decreasing
  IndexVector col_idx;  // nnz entries

  int64_t nnz() const { return int64_t(col_idx.size()); }
  // The pattern of the transpose and where its values come from; built once on first use
  // (thread-safe), because the VJP of spmm needs A^T on every backward pass.
  const CsrTranspose& transpose() const;

  mutable std::once_flag transpose_once_;
  mutable std::shared_ptr<const CsrTranspose> transpose_;
};

struct CsrTranspose {
  std::shared_ptr<const CsrPattern> pattern;  // A^T's structure
  IndexVector perm;                           // A^T's k-th value is A's value perm[k]
};

// Checks user-given CSR arrays: sizes, row_ptr[0] == 0, row_ptr non-decreasing and ending at
// nnz, column indices in [0, cols) and strictly increasing within each row (sorted, no
// duplicates), everything below 2^31. Throws ember::Error naming `op`, the row and the offending
// value. Returns the validated pattern.
std::shared_ptr<const CsrPattern> make_csr_pattern(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr,
                                                   const std::vector<int64_t>& col_idx, const char* op = "csr");

class CsrTensor {
 public:
  CsrTensor() = default;
  // values: 1-d, float32 or float64, CPU, one per nonzero (may be traced by autograd).
  CsrTensor(std::shared_ptr<const CsrPattern> pattern, Tensor values);
  // From user arrays (validated; see make_csr_pattern).
  CsrTensor(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr, const std::vector<int64_t>& col_idx,
            Tensor values);

  bool defined() const { return pattern_ != nullptr; }
  int64_t rows() const { return pattern().rows; }
  int64_t cols() const { return pattern().cols; }
  Shape shape() const { return {rows(), cols()}; }
  int64_t nnz() const { return pattern().nnz(); }
  double density() const;  // nnz / (rows * cols); 0 for an empty shape
  DType dtype() const { return values_.dtype(); }
  const CsrPattern& pattern() const;
  const std::shared_ptr<const CsrPattern>& pattern_ptr() const { return pattern_; }
  const Tensor& values() const { return values_; }

  CsrTensor with_values(Tensor values) const { return CsrTensor(pattern_, std::move(values)); }
  Tensor to_dense() const;         // not recorded by autograd
  CsrTensor transpose() const;     // A^T, values permuted (not recorded)
  CsrTensor to(DType dtype) const;  // values converted

 private:
  std::shared_ptr<const CsrPattern> pattern_;
  Tensor values_;
};

// A 2-d float tensor's nonzeros (exact zeros are dropped), in CSR form.
CsrTensor dense_to_csr(const Tensor& dense);

}  // namespace ember
