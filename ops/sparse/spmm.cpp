// spmm and sampled_dot: checks, the autograd records (VJP and JVP, see sparse_ops.h) and the
// calls into the CPU kernels. spgemm: checks and the kernel call.
#include <algorithm>

#include "framework/core/autograd/primitive.h"
#include "ops/op_list.h"
#include "ops/elementwise/elementwise.h"
#include "ops/sparse/sparse_ops.h"

namespace ember {

namespace {

using PatternPtr = std::shared_ptr<const CsrPattern>;

Tensor spmm_kernel(const PatternPtr& pattern, const Tensor& values, const Tensor& b, bool transpose_a) {
  const CsrPattern* p = pattern.get();
  Tensor v = values.contiguous();
  Tensor bc = b.contiguous();
  int64_t n = bc.size(1);
  return EMBER_DISPATCH_FLOAT(v.dtype(), "spmm", [&] {
    const scalar_t* pv = v.data<scalar_t>();
    Tensor vt;
    if (transpose_a) {  // A^T's values are A's, permuted into A^T's row order
      const CsrTranspose& t = p->transpose();
      vt = empty({p->nnz()}, v.dtype());
      sparse::cpu::gather(pv, t.perm.data(), p->nnz(), vt.data<scalar_t>());
      pv = vt.data<scalar_t>();
      p = t.pattern.get();
    }
    Tensor out = empty({p->rows, n}, v.dtype());
    sparse::cpu::spmm(*p, pv, bc.data<scalar_t>(), n, n, out.data<scalar_t>());
    return out;
  });
}

Tensor sampled_kernel(const PatternPtr& pattern, const Tensor& x, const Tensor& y) {
  Tensor xc = x.contiguous(), yc = y.contiguous();
  return EMBER_DISPATCH_FLOAT(xc.dtype(), "sampled_dot", [&] {
    Tensor out = empty({pattern->nnz()}, xc.dtype());
    int64_t k = xc.size(1);
    sparse::cpu::sddmm(*pattern, xc.data<scalar_t>(), k, yc.data<scalar_t>(), k, k, out.data<scalar_t>());
    return out;
  });
}

// The primitives. Shapes are checked once by the public functions. Both are bilinear, and each
// one's VJP is the other (or itself transposed): A^T g for B's gradient, the sampled product
// g B^T on A's pattern for A's values.
struct SparseAttrs {
  PatternPtr pattern;
  bool transpose_a = false;
};
using SparseCall = OpCall<SparseAttrs>;

Tensor add_defined(const Tensor& a, const Tensor& b) { return !a.defined() ? b : !b.defined() ? a : a + b; }

struct SparsePrims;
const SparsePrims& prims();

struct SparsePrims {
  Primitive<SparseAttrs> spmm =
      Primitive<SparseAttrs>("spmm")
          .cpu([](const Args& x, const SparseAttrs& a) {
            return KernelOut(spmm_kernel(a.pattern, x[0], x[1], a.transpose_a));
          })
          .saves({0, 1}, false)
          .vjp([](const Tensor& g, const SparseCall& c) {
            const SparseAttrs& a = c.attrs;
            Grads out(2);
            if (c.needs(0))
              out[0] = a.transpose_a ? prims().sampled({c.in[1], g}, {a.pattern}) : prims().sampled({g, c.in[1]}, {a.pattern});
            if (c.needs(1)) out[1] = prims().spmm({c.in[0], g}, {a.pattern, !a.transpose_a});
            return out;
          })
          .jvp([](const Args& t, const SparseCall& c) {
            Tensor out;
            if (t[0].defined()) out = prims().spmm({t[0], c.in[1]}, c.attrs);
            if (t[1].defined()) out = add_defined(out, prims().spmm({c.in[0], t[1]}, c.attrs));
            return out;
          });
  Primitive<SparseAttrs> sampled =
      Primitive<SparseAttrs>("sampled_dot")
          .cpu([](const Args& x, const SparseAttrs& a) { return KernelOut(sampled_kernel(a.pattern, x[0], x[1])); })
          .saves({0, 1}, false)
          .vjp([](const Tensor& h, const SparseCall& c) {
            Grads out(2);
            if (c.needs(0)) out[0] = prims().spmm({h, c.in[1]}, {c.attrs.pattern, false});
            if (c.needs(1)) out[1] = prims().spmm({h, c.in[0]}, {c.attrs.pattern, true});
            return out;
          })
          .jvp([](const Args& t, const SparseCall& c) {
            Tensor out;
            if (t[0].defined()) out = prims().sampled({t[0], c.in[1]}, c.attrs);
            if (t[1].defined()) out = add_defined(out, prims().sampled({c.in[0], t[1]}, c.attrs));
            return out;
          });
};

const SparsePrims& prims() {
  static const SparsePrims p;
  return p;
}

void check_operand(const char* op, const Tensor& t, DType dtype, const char* what) {
  EMBER_CHECK(t.defined(), op, ": ", what, " is undefined");
  EMBER_CHECK(t.dtype() == dtype, op, ": dtype mismatch, sparse values are ", dtype, " but ", what, " is ",
              t.dtype(), to_string(t.shape()));
  check_cpu(t, op);
}

}  // namespace

void declare_sparse_ops() { prims(); }

Tensor spmm(const CsrTensor& a, const Tensor& b, bool transpose_a) {
  EMBER_CHECK(a.defined(), "spmm: the sparse operand is undefined");
  check_operand("spmm", b, a.dtype(), "the dense operand");
  if (b.dim() == 1) return spmm(a, b.unsqueeze(1), transpose_a).squeeze(1);
  int64_t k = transpose_a ? a.rows() : a.cols();
  EMBER_CHECK(b.dim() == 2 && b.size(0) == k, "spmm: ", transpose_a ? "A^T" : "A", " of shape [",
              transpose_a ? a.cols() : a.rows(), ", ", k, "] cannot multiply a dense operand of shape ",
              to_string(b.shape()), " (expected [", k, ", n] or [", k, "])");
  return prims().spmm({a.values(), b}, {a.pattern_ptr(), transpose_a});
}

Tensor spmv(const CsrTensor& a, const Tensor& x, bool transpose_a) {
  EMBER_CHECK(x.defined() && x.dim() == 1, "spmv: expected a 1-d vector, got ",
              x.defined() ? to_string(x.shape()) : std::string("undefined"));
  return spmm(a, x, transpose_a);
}

Tensor sampled_dot(const std::shared_ptr<const CsrPattern>& pattern, const Tensor& x, const Tensor& y) {
  EMBER_CHECK(pattern, "sampled_dot: pattern is null");
  EMBER_CHECK(x.defined() && y.defined(), "sampled_dot: an operand is undefined");
  EMBER_CHECK(is_floating(x.dtype()) && x.dtype() == y.dtype(), "sampled_dot: expected two float operands of one dtype, got ",
              x.dtype(), " and ", y.dtype());
  check_cpu(x, "sampled_dot");
  check_cpu(y, "sampled_dot");
  EMBER_CHECK(x.dim() == 2 && y.dim() == 2 && x.size(0) == pattern->rows && y.size(0) == pattern->cols &&
                  x.size(1) == y.size(1),
              "sampled_dot: for a pattern of shape [", pattern->rows, ", ", pattern->cols, "] expected x [",
              pattern->rows, ", k] and y [", pattern->cols, ", k], got ", to_string(x.shape()), " and ",
              to_string(y.shape()));
  return prims().sampled({x, y}, {pattern});
}

CsrTensor spgemm(const CsrTensor& a, const CsrTensor& b, sparse::cpu::SpgemmProfile* profile) {
  EMBER_CHECK(a.defined() && b.defined(), "spgemm: an operand is undefined");
  EMBER_CHECK(a.cols() == b.rows(), "spgemm: inner dimensions differ, [", a.rows(), ", ", a.cols(), "] @ [",
              b.rows(), ", ", b.cols(), "]");
  EMBER_CHECK(a.dtype() == b.dtype(), "spgemm: dtype mismatch, ", a.dtype(), " vs ", b.dtype());
  EMBER_CHECK(!a.values().is_traced() && !b.values().is_traced(),
              "spgemm: not differentiable; detach the values of traced operands first");
  Tensor av = a.values().contiguous(), bv = b.values().contiguous();
  return EMBER_DISPATCH_FLOAT(av.dtype(), "spgemm", [&] {
    auto c = std::make_shared<CsrPattern>();
    Tensor cv;
    sparse::cpu::spgemm(a.pattern(), av.data<scalar_t>(), b.pattern(), bv.data<scalar_t>(), *c, cv, profile);
    return CsrTensor(std::move(c), cv);
  });
}

}  // namespace ember
