// Products with sparse matrices.
//
//   spmm(A, B)            A B          CSR x dense, differentiable w.r.t. A's values and B
//   spmv(A, x)            A x          the 1-d case of spmm (same primitive, same derivatives)
//   sampled_dot(P, X, Y)  (X Y^T)[P]   the dot products X[i,:].Y[j,:] at the nonzeros (i, j) of P;
//                                      the VJP of spmm w.r.t. the values (also called SDDMM)
//   spgemm(A, B)          A B          CSR x CSR -> CSR, not differentiable
//
// spmm and sampled_dot are a closed pair under differentiation (each one's VJP and JVP are
// written with the two of them), so derivatives of any order work:
//   C = A B:           dB = A^T G,   dvalues[p] = G[i,:].B[j,:]  for nonzero p at (i, j)
//   C = A^T B:         dB = A G,     dvalues[p] = B[i,:].G[j,:]
//   v = sampled(X, Y): dX = V Y,     dY = V^T X                   (V: the pattern with values h)
// CPU only for now; the sparse study times cuSPARSE on raw device arrays (examples/sparse/study/cusparse.h).
#pragma once
#include "framework/core/tensor.h"
#include "ops/sparse/coo.h"
#include "ops/sparse/cpu/kernels.h"
#include "ops/sparse/csr.h"

namespace ember {

// op(A) B with op(A) = A^T when transpose_a. B: [k, n] where k = op(A)'s column count; the
// result is [op(A) rows, n]. B may also be 1-d (then the result is 1-d: an SpMV).
Tensor spmm(const CsrTensor& a, const Tensor& b, bool transpose_a = false);
Tensor spmv(const CsrTensor& a, const Tensor& x, bool transpose_a = false);

// One value per nonzero of `pattern`: out[p] = sum_k x[i, k] y[j, k] for nonzero p at (i, j).
// x: [pattern.rows, k], y: [pattern.cols, k].
Tensor sampled_dot(const std::shared_ptr<const CsrPattern>& pattern, const Tensor& x, const Tensor& y);

// A B for two CSR matrices of the same value dtype (Gustavson; see cpu/kernels.h). Throws when
// either operand's values are traced by autograd, rather than silently dropping the gradient.
CsrTensor spgemm(const CsrTensor& a, const CsrTensor& b, sparse::cpu::SpgemmProfile* profile = nullptr);

}  // namespace ember
