// matmul on CUDA tensors: picks the variant by name, maps Ember's strided (batched) operands onto
// it, and runs cuBLAS for the library's "cublas" and "cublas_tf32" (and for bfloat16 / float16
// operands, cuBLAS's tensor-core GEMM); any other name is a registered variant
// (register_matmul_cuda_variant), whose kernel takes the same view. Host code only.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/cuda/check.h"
#include "ops/matmul/cuda/gemm.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

// How one operand appears to column-major cuBLAS. Row-major C = A B is computed as the
// column-major product C^T = B^T A^T: a row-major operand is then read untransposed (op N), a
// column-major one (a transposed view) transposed (op T).
struct BlasOperand {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
};

// X is rows x cols with strides (rs, cs).
BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs == 1 || cols == 1) {  // row-major: X^T is column-major with ld = rs
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) return {true, CUBLAS_OP_N, ld};
  }
  if (rs == 1 || rows == 1) {  // column-major: X itself is column-major with ld = cs
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) return {true, CUBLAS_OP_T, ld};
  }
  return {};
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// A and B as cuBLAS reads them, checked: row- or column-major, sizes within its int arguments.
template <class T>
std::pair<BlasOperand, BlasOperand> checked_operands(const GemmView<T>& g, int64_t batch) {
  BlasOperand a = blas_operand(g.m, g.k, g.a_rs, g.a_cs), b = blas_operand(g.k, g.n, g.b_rs, g.b_cs);
  EMBER_CHECK(a.ok && b.ok && g.c_rs >= g.n, "matmul (cublas): operands must be row- or column-major");
  EMBER_CHECK(fits_int(g.m) && fits_int(g.n) && fits_int(g.k) && fits_int(a.ld) && fits_int(b.ld) && fits_int(g.c_rs) &&
                  fits_int(batch),
              "matmul (cublas): sizes beyond cuBLAS's 32-bit int arguments (", g.m, " x ", g.k, " @ ", g.k, " x ", g.n, ")");
  return {a, b};
}

template <class T>
void cublas_gemm(const GemmView<T>& g, int64_t batch, bool tf32) {
  const auto [a, b] = checked_operands(g, batch);
  cublasHandle_t h = cublas_handle();
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>) {
    // The handle is shared, so the math mode is set on every call; DEFAULT_MATH is true FP32.
    EMBER_CUDA_CHECK(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    EMBER_CUDA_CHECK(cublasSgemmStridedBatched(h, b.op, a.op, int(g.n), int(g.m), int(g.k), &one, g.b, int(b.ld),
                                               g.b_bs, g.a, int(a.ld), g.a_bs, &zero, g.c, int(g.c_rs), g.c_bs,
                                               int(batch)));
  } else {
    EMBER_CHECK(!tf32, "matmul (cublas_tf32): TF32 math is for float32 operands, got float64");
    EMBER_CUDA_CHECK(cublasDgemmStridedBatched(h, b.op, a.op, int(g.n), int(g.m), int(g.k), &one, g.b, int(b.ld),
                                               g.b_bs, g.a, int(a.ld), g.a_bs, &zero, g.c, int(g.c_rs), g.c_bs,
                                               int(batch)));
  }
}

// bfloat16 / float16 operands and result, float32 accumulation (CUBLAS_COMPUTE_32F): cuBLAS runs
// these on the tensor cores wherever the GPU has them.
void cublas_gemm_half(const GemmView<uint16_t>& g, int64_t batch, DType dtype) {
  const auto [a, b] = checked_operands(g, batch);
  const cudaDataType_t t = dtype == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_16F;
  const float one = 1, zero = 0;
  cublasHandle_t h = cublas_handle();
  EMBER_CUDA_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  EMBER_CUDA_CHECK(cublasGemmStridedBatchedEx(h, b.op, a.op, int(g.n), int(g.m), int(g.k), &one, g.b, t, int(b.ld),
                                              g.b_bs, g.a, t, int(a.ld), g.a_bs, &zero, g.c, t, int(g.c_rs), g.c_bs,
                                              int(batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

bool is_cublas(const std::string& impl) { return impl == "cublas" || impl == "cublas_tf32"; }

template <class T>
void gemm_typed(const GemmView<T>& g, int64_t batch, const std::string& name, int tile) {
  if (g.m == 0 || g.n == 0 || batch == 0) return;
  const std::string impl = name.empty() || name == "auto" ? std::string("cublas") : name;
  if (is_cublas(impl)) return cublas_gemm(g, batch, impl == "cublas_tf32");
  CudaMatmulKernels k = matmul_cuda_kernels(impl);  // ember::Error naming the registered variants
  MatmulOptions opt;
  opt.impl = impl, opt.tile = tile;
  if constexpr (std::is_same_v<T, float>) {
    EMBER_CHECK(bool(k.f32), "matmul (", impl, "): the variant has no float32 kernel");
    k.f32(g, batch, opt);
  } else {
    EMBER_CHECK(bool(k.f64), "matmul (", impl, "): float64 is not supported by this variant (float32 only)");
    k.f64(g, batch, opt);
  }
}

// Offsets of every batch entry of a tensor whose leading `batch.size()` dims are the batch.
std::vector<int64_t> batch_offsets(const Tensor& t, const Shape& batch) {
  std::vector<int64_t> out;
  int64_t nb = numel(batch);
  out.reserve(size_t(nb));
  Shape idx(batch.size(), 0);
  for (int64_t e = 0; e < nb; ++e) {
    int64_t off = t.offset();
    for (size_t d = 0; d < batch.size(); ++d) off += idx[d] * t.strides()[d];
    out.push_back(off);
    for (int64_t d = int64_t(batch.size()) - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < batch[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

// The common step of an arithmetic sequence, or -1 when the offsets do not form one.
int64_t uniform_step(const std::vector<int64_t>& off) {
  if (off.size() < 2) return 0;
  int64_t step = off[1] - off[0];
  for (size_t i = 2; i < off.size(); ++i)
    if (off[i] - off[i - 1] != step) return -1;
  return step;
}

// One launch of the chosen variant; 16-bit views (T = uint16_t) go to cuBLAS only.
template <class T>
void launch(const GemmView<T>& g, int64_t batch, const std::string& impl, int tile, DType dtype) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    if (g.m > 0 && g.n > 0 && batch > 0) cublas_gemm_half(g, batch, dtype);
  } else {
    (void)dtype;
    gemm(g, batch, impl, tile);
  }
}

template <class T>
Tensor matmul_typed(Tensor a, Tensor b, const Shape& batch, const MatmulOptions& opt) {
  int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  Shape ashape = batch, bshape = batch, oshape = batch;
  ashape.insert(ashape.end(), {m, k});
  bshape.insert(bshape.end(), {k, n});
  oshape.insert(oshape.end(), {m, n});
  Tensor out = empty(oshape, a.dtype(), Device::CUDA);
  if (out.numel() == 0) return out;
  if (k == 0) return out.zero_();
  Tensor ae = a.expand(ashape), be = b.expand(bshape);  // stride-0 batch views, no copies
  size_t nb = batch.size();
  auto view = [&](const Tensor& x, const Tensor& y) {
    GemmView<T> g;
    g.m = m, g.n = n, g.k = k;
    g.a = static_cast<const T*>(x.impl()->storage->data());
    g.a_rs = x.strides()[nb], g.a_cs = x.strides()[nb + 1];
    g.b = static_cast<const T*>(y.impl()->storage->data());
    g.b_rs = y.strides()[nb], g.b_cs = y.strides()[nb + 1];
    g.c = static_cast<T*>(out.raw_data()), g.c_rs = n;
    return g;
  };
  const std::string impl = opt.impl.empty() || opt.impl == "auto" ? std::string("cublas") : opt.impl;
  if constexpr (std::is_same_v<T, uint16_t>)
    EMBER_CHECK(impl == "cublas", "matmul (", impl, "): ", a.dtype(),
                " operands run on cuBLAS only (impl \"auto\" or \"cublas\"); the other variants take float32");
  if (is_cublas(impl)) {  // cuBLAS needs row- or column-major matrices
    if (!cublas_compatible(view(ae, be))) {
      ae = ae.contiguous();
      be = be.contiguous();
    }
  }
  GemmView<T> g = view(ae, be);
  std::vector<int64_t> oa = batch_offsets(ae, batch), ob = batch_offsets(be, batch);
  int64_t sa = uniform_step(oa), sb = uniform_step(ob), count = numel(batch);
  if (sa >= 0 && sb >= 0) {  // one (strided-batched) launch
    g.a += oa[0], g.b += ob[0];
    g.a_bs = sa, g.b_bs = sb, g.c_bs = m * n;
    launch(g, count, impl, opt.tile, a.dtype());
    return out;
  }
  for (int64_t e = 0; e < count; ++e) {  // irregular batch layout: one launch per entry
    GemmView<T> s = g;
    s.a += oa[size_t(e)], s.b += ob[size_t(e)], s.c += e * m * n;
    launch(s, 1, impl, opt.tile, a.dtype());
  }
  return out;
}

}  // namespace

template <class T>
bool cublas_compatible(const GemmView<T>& g) {
  return blas_operand(g.m, g.k, g.a_rs, g.a_cs).ok && blas_operand(g.k, g.n, g.b_rs, g.b_cs).ok && g.c_rs >= g.n;
}
template bool cublas_compatible<float>(const GemmView<float>&);
template bool cublas_compatible<double>(const GemmView<double>&);
template bool cublas_compatible<uint16_t>(const GemmView<uint16_t>&);

void gemm(const GemmView<float>& g, int64_t batch, const std::string& impl, int tile) { gemm_typed(g, batch, impl, tile); }
void gemm(const GemmView<double>& g, int64_t batch, const std::string& impl, int tile) { gemm_typed(g, batch, impl, tile); }

Tensor matmul(const Tensor& a, const Tensor& b, const Shape& batch, const MatmulOptions& opt) {
  EMBER_CHECK(a.device() == Device::CUDA && b.device() == Device::CUDA, "matmul: expected CUDA operands");
  if (is_half(a.dtype())) return matmul_typed<uint16_t>(a, b, batch, opt);
  return EMBER_DISPATCH_FLOAT(a.dtype(), "matmul", [&] { return matmul_typed<scalar_t>(a, b, batch, opt); });
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::matmul.set(&matmul);
  return true;
}();
}  // namespace

}  // namespace ember::cuda

