// Tensor: a cheap handle to a TensorImpl (storage, shape, strides, offset, dtype).
// Views (reshape, transpose, slice, expand) share storage; ops produce new tensors.
// Autograd boxes a tensor by wrapping it in another TensorImpl that shares the same data and
// carries a Node (framework/core/autograd/trace.h); user code never needs to know which it holds.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "framework/core/dtype.h"
#include "framework/core/shape.h"
#include "framework/core/storage.h"

namespace ember {

namespace autograd {
struct Node;
}

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements, into storage
  DType dtype = DType::Float32;

  // Autograd. A boxed tensor's `inner` is the value one trace level down (itself maybe boxed);
  // `node` recorded it in trace `trace`. A raw tensor has none of these.
  std::shared_ptr<TensorImpl> inner;
  std::shared_ptr<autograd::Node> node;
  int trace = 0;
  // PyTorch-style leaves (requires_grad_) accumulate their gradient here in backward().
  std::shared_ptr<TensorImpl> grad;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return checked()->shape; }
  const Shape& strides() const { return checked()->strides; }
  int64_t offset() const { return checked()->offset; }
  int64_t dim() const { return int64_t(shape().size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return ember::numel(shape()); }
  DType dtype() const { return checked()->dtype; }
  Device device() const { return checked()->storage->device(); }
  bool is_contiguous() const;

  // Pointer to the first element. Checks the element type; host-side access needs a CPU tensor.
  template <class T>
  T* data() const {
    EMBER_CHECK(dtype() == dtype_of<T>::value, "Tensor::data: tensor is ", dtype(), ", asked for ",
                name(dtype_of<T>::value));
    return static_cast<T*>(raw_data());
  }
  void* raw_data() const;  // first element's address on its device

  // Element access (CPU), as double whatever the dtype.
  double item() const;  // one-element tensors only
  double at(const Shape& index) const;
  void set(const Shape& index, double value);  // writes through views; not recorded by autograd
  template <class T>
  std::vector<T> to_vector() const;  // the elements in row-major order, converted to T (T: float,
                                     // double, int64_t, bool, bfloat16, float16)

  // Differentiable views and copies (recorded when the tensor is traced).
  Tensor reshape(const Shape& shape) const;  // a view when the strides allow it, else a copy; one dim may be -1
  Tensor view(const Shape& shape) const;     // like reshape but never copies: error when impossible
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const Shape& dims) const;
  Tensor t() const { return transpose(-2, -1); }
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;  // Python-style bounds
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;  // exactly `length` from `start`, else an error
  Tensor expand(const Shape& shape) const;  // NumPy broadcasting; -1 keeps a dimension
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor flatten() const { return reshape({numel()}); }
  Tensor contiguous() const;  // this tensor when already contiguous, else a row-major copy
  Tensor clone() const;       // always a fresh copy
  Tensor to(DType t) const;   // differentiable between float types
  Tensor to(Device d) const;

  // ---- method syntax for the common ops (defined in ops/tensor_methods.cpp) ----
  // Each forwards to the free function of the same name (x.sum(1) is sum(x, {1})); a double operand
  // becomes a 0-d tensor as in the operators (x.gt(0.0) is gt(x, scalar_like(x, 0.0))).
  Tensor sum() const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor sum(const Shape& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(int64_t dim, bool keepdim = false) const;
  Tensor mean(const Shape& dims, bool keepdim = false) const;
  Tensor max() const;
  Tensor max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  Tensor min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor relu() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor square() const;
  Tensor pow(double exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor clamp(double lo, double hi) const;
  Tensor matmul(const Tensor& w) const;
  Tensor softmax(int64_t dim = -1) const;
  Tensor log_softmax(int64_t dim = -1) const;
  Tensor gt(double v) const;
  Tensor ge(double v) const;
  Tensor lt(double v) const;
  Tensor le(double v) const;
  Tensor eq(double v) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(double v) const;
  Tensor ne(const Tensor& o) const;
  Tensor logical_not() const;
  // ---- end of method syntax ----

  // PyTorch-style autograd on leaves: requires_grad_, then backward() on a scalar result.
  Tensor& requires_grad_(bool on = true);
  bool requires_grad() const;  // true for leaves that asked and for results computed from them
  Tensor grad() const;         // the accumulated gradient of a leaf, undefined before backward()
  void zero_grad();
  void backward(const Tensor& cotangent = Tensor()) const;
  Tensor detach() const;  // the same data with every autograd box removed
  bool is_traced() const { return defined() && impl_->node != nullptr; }

  // In-place updates for optimizers and initialisers: they write the data and are not recorded.
  // Each stamps the storage (Storage::mark_written), so a backward that would read a saved tensor
  // overwritten since the forward fails with an ember::Error instead of a wrong gradient. The
  // arithmetic ones (defined in ops/inplace_methods.cpp) broadcast `other` to this tensor's shape,
  // keep its dtype, and are refused on a tensor autograd tracks while gradients are recorded
  // (wrap them in NoGradGuard, as an optimizer step does); copy_/fill_ always write.
  Tensor& copy_(const Tensor& src);
  Tensor& fill_(double value);
  Tensor& zero_() { return fill_(0.0); }
  Tensor& add_(const Tensor& other, double alpha = 1.0);  // this += alpha * other
  Tensor& add_(double value);
  Tensor& sub_(const Tensor& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double value);
  Tensor& div_(const Tensor& other);
  Tensor& div_(double value);
  Tensor& clamp_(double lo, double hi);

  std::string to_string(int max_per_dim = 6) const;
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  TensorImpl* checked() const {
    EMBER_CHECK(impl_, "use of an undefined Tensor (default-constructed or moved-from)");
    return impl_.get();
  }
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- factories ----
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device::CPU);
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device::CPU);
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device::CPU);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32, Device device = Device::CPU);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor scalar(double value, DType dtype = DType::Float32, Device device = Device::CPU);  // 0-d
Tensor arange(int64_t end, DType dtype = DType::Int64);
Tensor arange(int64_t start, int64_t end, int64_t step = 1, DType dtype = DType::Int64);
// From host data; the shape defaults to 1-d. Throws when the sizes disagree.
Tensor from_vector(const std::vector<float>& v, const Shape& shape = {});
Tensor from_vector(const std::vector<double>& v, const Shape& shape = {});
Tensor from_vector(const std::vector<int64_t>& v, const Shape& shape = {});
Tensor from_vector(const std::vector<bool>& v, const Shape& shape = {});  // DType::Bool
Tensor from_vector(const std::vector<bfloat16>& v, const Shape& shape = {});
Tensor from_vector(const std::vector<float16>& v, const Shape& shape = {});

// Checks that every tensor lives on the CPU, naming `op` otherwise (used by CPU-only code).
void check_cpu(const Tensor& t, const char* op);

}  // namespace ember

// The random factories (rand, randn, manual_seed, ...) are part of every Tensor user's vocabulary.
#include "framework/core/random.h"  // IWYU pragma: export
