#include "framework/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>
#include <type_traits>

#include "framework/core/autograd/autograd.h"
#include "framework/core/device_copy.h"
#include "framework/core/cuda_hooks.h"

namespace ember {

namespace autograd {
void eager_backward(const Tensor& y, const Tensor& cotangent);  // autograd.cpp
}

namespace {
DeviceCopyFn g_device_copy = nullptr;

std::shared_ptr<TensorImpl> raw_impl(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    EMBER_CHECK(d >= 0, "empty: negative dimension in shape ", ember::to_string(shape), " (expected sizes >= 0)");
  // Strides first: they refuse a shape whose count overflows even when a zero size makes numel() 0.
  Shape strides = contiguous_strides(shape);
  const int64_t bytes = checked_bytes(numel(shape), itemsize(dtype), "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(size_t(bytes), device);
  impl->shape = shape;
  impl->strides = std::move(strides);
  impl->dtype = dtype;
  return impl;
}

int64_t element_offset(const Tensor& t, const Shape& index, const char* op) {
  EMBER_CHECK(int64_t(index.size()) == t.dim(), op, ": index has ", index.size(), " entries for a tensor of shape ",
              ember::to_string(t.shape()));
  int64_t off = t.offset();
  for (size_t i = 0; i < index.size(); ++i) {
    EMBER_CHECK(index[i] >= 0 && index[i] < t.shape()[i], op, ": index ", ember::to_string(index),
                " is out of range for shape ", ember::to_string(t.shape()));
    off += index[i] * t.strides()[i];
  }
  return off;
}

// v stored as T: a 16-bit float rounds once (float_for_half), the others convert as C++ does.
template <class T, class V>
T element_from(V v) {
  if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>) return T(float_for_half(double(v)));
  else return T(v);
}

double read(const void* base, DType dt, int64_t off) {
  switch (dt) {
    case DType::Float32: return static_cast<const float*>(base)[off];
    case DType::Float64: return static_cast<const double*>(base)[off];
    case DType::Int64: return double(static_cast<const int64_t*>(base)[off]);
    case DType::Bool: return static_cast<const bool*>(base)[off] ? 1.0 : 0.0;
    case DType::BFloat16: return float(static_cast<const bfloat16*>(base)[off]);
    case DType::Float16: return float(static_cast<const float16*>(base)[off]);
  }
  return 0;
}

void write(void* base, DType dt, int64_t off, double v) {
  switch (dt) {
    case DType::Float32: static_cast<float*>(base)[off] = float(v); break;
    case DType::Float64: static_cast<double*>(base)[off] = v; break;
    case DType::Int64: static_cast<int64_t*>(base)[off] = int64_t(v); break;
    case DType::Bool: static_cast<bool*>(base)[off] = v != 0; break;  // nonzero (NaN too) is true
    case DType::BFloat16: static_cast<bfloat16*>(base)[off] = bfloat16(float_for_half(v)); break;
    case DType::Float16: static_cast<float16*>(base)[off] = float16(float_for_half(v)); break;
  }
}

// Calls f(storage offset) for every element of t in row-major order.
template <class F>
void for_each_offset(const Tensor& t, F&& f) {
  const Shape& sh = t.shape();
  const Shape& st = t.strides();
  int64_t n = t.numel();
  if (n == 0) return;
  Shape idx(sh.size(), 0);
  int64_t off = t.offset();
  for (int64_t k = 0; k < n; ++k) {
    f(off);
    for (int64_t d = int64_t(sh.size()) - 1; d >= 0; --d) {
      if (++idx[d] < sh[d]) {
        off += st[d];
        break;
      }
      off -= st[d] * (sh[d] - 1);
      idx[d] = 0;
    }
  }
}
}  // namespace

void set_device_copy(DeviceCopyFn fn) { g_device_copy = fn; }
void copy_bytes(void* dst, Device dd, const void* src, Device sd, size_t bytes) {
  if (dd == Device::CPU && sd == Device::CPU) {
    std::memcpy(dst, src, bytes);
    return;
  }
  EMBER_CHECK(g_device_copy, "copy between ", sd, " and ", dd, ": CUDA is not available in this build or process");
  g_device_copy(dst, dd, src, sd, bytes);
}

namespace {
// The values of t readable on the host with t's own strides: t itself on the CPU, else a CPU
// tensor over a byte copy of the span of storage that t's view covers (so a strided device view
// needs no device kernel, and a slice of a large tensor copies only its own elements' range).
Tensor on_host(const Tensor& t) {
  if (t.device() == Device::CPU) return t;
  int64_t span = t.numel() == 0 ? 0 : 1;  // elements from the view's first to its last, strides >= 0
  for (size_t d = 0; d < t.shape().size(); ++d)
    if (t.shape()[d] > 0) span += (t.shape()[d] - 1) * t.strides()[d];
  const size_t es = itemsize(t.dtype()), bytes = size_t(span) * es;
  auto impl = std::make_shared<TensorImpl>(*t.impl());
  impl->storage = std::make_shared<Storage>(bytes, Device::CPU);
  impl->offset = 0;
  impl->inner.reset();
  impl->node.reset();
  impl->grad.reset();
  impl->trace = 0;
  const char* src = static_cast<const char*>(t.impl()->storage->data()) + t.offset() * int64_t(es);
  copy_bytes(impl->storage->data(), Device::CPU, src, t.device(), bytes);
  return Tensor(impl);
}
}  // namespace

void check_cpu(const Tensor& t, const char* op) {
  EMBER_CHECK(t.device() == Device::CPU, op, ": expected a CPU tensor, got one on ", t.device());
}

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim(), "Tensor::size")]; }

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (shape()[i] != 1 && strides()[i] != expect) return false;
    expect *= shape()[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  return static_cast<char*>(checked()->storage->data()) + offset() * int64_t(itemsize(dtype()));
}

double Tensor::item() const {
  EMBER_CHECK(numel() == 1, "item: expected a one-element tensor, got shape ", ember::to_string(shape()));
  check_cpu(*this, "item");
  return read(impl_->storage->data(), dtype(), offset());
}

double Tensor::at(const Shape& index) const {
  check_cpu(*this, "at");
  return read(impl_->storage->data(), dtype(), element_offset(*this, index, "at"));
}

void Tensor::set(const Shape& index, double value) {
  check_cpu(*this, "set");
  write(impl_->storage->data(), dtype(), element_offset(*this, index, "set"), value);
  impl_->storage->mark_written("set");
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = on_host(*this);
  std::vector<T> out;
  out.reserve(size_t(numel()));
  const void* base = c.impl()->storage->data();
  DType dt = c.dtype();
  if constexpr (std::is_same_v<T, int64_t>) {
    // Exactly: through a double, int64 values above 2^53 would round (and 2^63-1 would overflow).
    if (dt == DType::Int64) {
      for_each_offset(c, [&](int64_t off) { out.push_back(static_cast<const int64_t*>(base)[off]); });
      return out;
    }
  }
  if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>) {
    for_each_offset(c, [&](int64_t off) { out.push_back(T(float_for_half(read(base, dt, off)))); });
  } else {
    for_each_offset(c, [&](int64_t off) { out.push_back(T(read(base, dt, off))); });
  }
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;
template std::vector<bfloat16> Tensor::to_vector<bfloat16>() const;
template std::vector<float16> Tensor::to_vector<float16>() const;

Tensor& Tensor::requires_grad_(bool on) {
  EMBER_CHECK(is_floating(dtype()), "requires_grad_: only floating tensors can require gradients, this one is ", dtype());
  if (on) {
    if (requires_grad()) return *this;
    EMBER_CHECK(!is_traced(), "requires_grad_: only leaf tensors can be marked; this one is computed by a traced op");
    auto node = std::make_shared<autograd::Node>();
    node->op = "leaf";
    node->is_leaf = true;
    node->shape = shape();
    node->dtype = dtype();
    node->device = device();
    Tensor boxed = autograd::box(*this, autograd::kEagerTrace, node);
    node->leaf_tensor = boxed.impl_ptr();
    *this = boxed;
  } else if (is_traced() && impl_->trace == autograd::kEagerTrace && impl_->node->is_leaf) {
    *this = Tensor(impl_->inner);
  }
  return *this;
}

bool Tensor::requires_grad() const {
  for (TensorImpl* p = impl_.get(); p && p->node; p = p->inner.get())
    if (p->trace == autograd::kEagerTrace) return true;
  return false;
}

Tensor Tensor::grad() const {
  for (TensorImpl* p = impl_.get(); p && p->node; p = p->inner.get())
    if (p->trace == autograd::kEagerTrace) return Tensor(p->grad);
  return Tensor();
}

void Tensor::zero_grad() {
  for (TensorImpl* p = impl_.get(); p && p->node; p = p->inner.get())
    if (p->trace == autograd::kEagerTrace) p->grad.reset();
}

void Tensor::backward(const Tensor& cotangent) const { autograd::eager_backward(*this, cotangent); }
Tensor Tensor::detach() const { return autograd::unbox_all(*this); }

Tensor& Tensor::fill_(double value) {
  // Converting NaN, an infinity or |v| >= 2^63 to int64 is undefined in C++; refuse it by name.
  EMBER_CHECK(dtype() != DType::Int64 || (value >= -9223372036854775808.0 && value < 9223372036854775808.0), "fill_: ",
              value, " is not an int64 value (expected a finite number in [-2^63, 2^63))");
  checked()->storage->mark_written("fill_");
  if (device() == Device::CUDA) {  // ops/shape/cuda/copy.cu: no host buffer, no synchronous copy
    cuda::runtime::fill(*this, value);
    return *this;
  }
  void* base = impl_->storage->data();
  DType dt = dtype();
  if (is_contiguous()) {
    EMBER_DISPATCH_EVERY(dt, "fill_", [&] {
      scalar_t* p = static_cast<scalar_t*>(base) + offset();
      std::fill(p, p + numel(), element_from<scalar_t>(value));
    });
  } else {
    for_each_offset(*this, [&](int64_t off) { write(base, dt, off, value); });
  }
  return *this;
}

std::string Tensor::to_string(int max_per_dim) const {
  std::ostringstream os;
  Tensor c = on_host(detach());
  os << "tensor(";
  const void* base = c.impl()->storage->data();
  bool fl = is_floating(c.dtype());
  std::function<void(int64_t, int64_t, int)> rec = [&](int64_t d, int64_t off, int indent) {
    if (d == c.dim()) {
      double v = read(base, c.dtype(), off);
      if (fl) os << std::setprecision(5) << std::defaultfloat << v;
      else if (c.dtype() == DType::Bool) os << (v != 0 ? "true" : "false");
      else os << int64_t(v);
      return;
    }
    os << "[";
    int64_t n = c.shape()[d];
    for (int64_t i = 0; i < n; ++i) {
      if (n > 2 * max_per_dim && i == max_per_dim) {
        os << "...";
        i = n - max_per_dim - 1;
        os << (d + 1 == c.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
        continue;
      }
      rec(d + 1, off + i * c.strides()[d], indent + 1);
      if (i + 1 < n) os << (d + 1 == c.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
    }
    os << "]";
  };
  rec(0, c.offset(), 7);
  os << ", shape=" << ember::to_string(shape()) << ", dtype=" << dtype();
  if (device() != Device::CPU) os << ", device=" << device();
  if (requires_grad()) os << ", requires_grad";
  os << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

// ---- factories ----
Tensor empty(const Shape& shape, DType dtype, Device device) { return Tensor(raw_impl(shape, dtype, device)); }
Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  // fill_'s CPU loop is written for the numeric dtypes; a Bool fill is one memset.
  if (dtype == DType::Bool && device == Device::CPU) {
    std::memset(t.raw_data(), value != 0 ? 1 : 0, size_t(t.numel()));
    return t;
  }
  t.fill_(value);
  return t;
}
Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, double v) { return full(t.shape(), v, t.dtype(), t.device()); }
Tensor scalar(double value, DType dtype, Device device) { return full({}, value, dtype, device); }

Tensor arange(int64_t end, DType dtype) { return arange(0, end, 1, dtype); }
Tensor arange(int64_t start, int64_t end, int64_t step, DType dtype) {
  EMBER_CHECK(step != 0, "arange: step must be non-zero");
  int64_t n = std::max<int64_t>(0, (end - start + step + (step > 0 ? -1 : 1)) / step);
  Tensor t = empty({n}, dtype);
  EMBER_CHECK(dtype != DType::Bool, "arange: got bool, accepts float32, float64, int64, bfloat16, float16");
  EMBER_DISPATCH_EVERY(dtype, "arange", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = element_from<scalar_t>(start + i * step);
  });
  return t;
}

namespace {
template <class T>
Tensor from_host(const std::vector<T>& v, const Shape& shape) {
  Shape s = shape.empty() && v.size() != 1 ? Shape{int64_t(v.size())} : shape;
  for (int64_t d : s) EMBER_CHECK(d >= 0, "from_vector: negative dimension in shape ", ember::to_string(s));
  EMBER_CHECK(numel(s) == int64_t(v.size()), "from_vector: ", v.size(), " values do not fill shape ", ember::to_string(s),
              " (", numel(s), " elements)");
  Tensor t = empty(s, dtype_of<T>::value);
  // std::vector<bool> packs bits, so its elements are written one by one.
  if constexpr (std::is_same_v<T, bool>) {
    bool* o = t.data<bool>();
    for (size_t i = 0; i < v.size(); ++i) o[i] = v[i];
  } else if (!v.empty()) {
    std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(T));
  }
  return t;
}
}  // namespace
Tensor from_vector(const std::vector<float>& v, const Shape& s) { return from_host(v, s); }
Tensor from_vector(const std::vector<double>& v, const Shape& s) { return from_host(v, s); }
Tensor from_vector(const std::vector<int64_t>& v, const Shape& s) { return from_host(v, s); }
Tensor from_vector(const std::vector<bool>& v, const Shape& s) { return from_host(v, s); }
Tensor from_vector(const std::vector<bfloat16>& v, const Shape& s) { return from_host(v, s); }
Tensor from_vector(const std::vector<float16>& v, const Shape& s) { return from_host(v, s); }

}  // namespace ember
