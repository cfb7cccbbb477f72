// ember.Tensor: the handle, its metadata, views, NumPy/DLPack interop, factories and operators.
// Indexing (x[0, 1:3]) and the DLPack protocol methods are written in Python on top of these
// (ember/_tensor.py): they only compose slice/squeeze views and the ndarray view below.
#include <nanobind/operators.h>

#include "bindings.h"
#include "framework/core/max_rank.h"

namespace ember::py {

PyCallable::PyCallable(nb::handle fn) : ref_(new Ref{fn.ptr()}) { Py_INCREF(fn.ptr()); }

bool python_alive() {
  // After Py_Finalize (static op tables are destroyed then) there is nothing to release into.
  if (!Py_IsInitialized()) return false;
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsFinalizing();
#else
  return !_Py_IsFinalizing();
#endif
}

PyCallable::Ref::~Ref() {
  if (!python_alive()) return;
  nb::gil_scoped_acquire gil;
  Py_DECREF(obj);
}

namespace {

// DLPack's 16-bit floats: IEEE half is kDLFloat with 16 bits, bfloat16 has its own code (kDLBfloat).
constexpr nb::dlpack::dtype kDLFloat16{uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
constexpr nb::dlpack::dtype kDLBFloat16{uint8_t(nb::dlpack::dtype_code::Bfloat), 16, 1};

nb::dlpack::dtype dl_dtype(DType t) {
  switch (t) {
    case DType::Float32: return nb::dtype<float>();
    case DType::Float64: return nb::dtype<double>();
    case DType::Int64: return nb::dtype<int64_t>();
    case DType::Bool: return nb::dtype<bool>();
    case DType::Float16: return kDLFloat16;
    case DType::BFloat16: return kDLBFloat16;
  }
  throw Error("numpy: unknown dtype");
}

DType ember_dtype(nb::dlpack::dtype d) {
  if (d == nb::dtype<float>()) return DType::Float32;
  if (d == nb::dtype<double>()) return DType::Float64;
  if (d == nb::dtype<int64_t>()) return DType::Int64;
  if (d == nb::dtype<bool>()) return DType::Bool;
  if (d == kDLFloat16) return DType::Float16;
  if (d == kDLBFloat16) return DType::BFloat16;
  throw Error("from_numpy: unsupported element type (code " + std::to_string(int(d.code)) + ", " +
              std::to_string(int(d.bits)) + " bits); expected float32, float64, int64, bool, float16 or bfloat16");
}

using CpuArray = nb::ndarray<nb::device::cpu>;
using CudaArray = nb::ndarray<nb::device::cuda>;

// Wraps the array's memory without copying. The caller (ember.from_numpy, ember.from_dlpack) has
// checked that the layout is one Ember can address: non-negative strides in whole elements, aligned.
template <class Array>
Tensor from_array(const Array& a, Device device) {
  check_rank(a.ndim(), "from_numpy");  // a DLPack producer may declare any number of dimensions
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = ember_dtype(a.dtype());
  int64_t extent = 1;  // elements from the first to one past the last
  bool empty = false;
  for (size_t i = 0; i < a.ndim(); ++i) {
    int64_t n = int64_t(a.shape(i)), s = a.stride(i);
    EMBER_CHECK(s >= 0, "from_numpy: negative strides are not supported (dimension ", i, " has stride ", s, ")");
    impl->shape.push_back(n);
    impl->strides.push_back(s);
    if (n == 0) empty = true;
    extent += (n - 1) * s;
  }
  if (empty) extent = 0;
  // The ndarray handle is released under the GIL: a tensor can die inside a kernel that runs without it.
  auto* keep = new Array(a);
  std::shared_ptr<void> owner(keep, [](void* p) {
    if (!python_alive()) return;  // a tensor that outlived the interpreter leaks its array's handle
    nb::gil_scoped_acquire gil;
    delete static_cast<Array*>(p);
  });
  impl->storage = std::make_shared<Storage>(a.data(), size_t(extent) * itemsize(impl->dtype), device, owner);
  return Tensor(std::move(impl));
}

Tensor from_ndarray(const CpuArray& a) { return from_array(a, Device::CPU); }

// A CUDA producer's memory (a DLPack capsule of device kDLCUDA). Ember runs on one GPU, device 0.
Tensor from_cuda_dlpack(const CudaArray& a) {
  EMBER_CHECK(a.device_id() == 0, "from_dlpack: the array is on cuda:", a.device_id(),
              "; Ember uses cuda:0 only");
  cuda::ensure_backend();  // the ops on this tensor need the backend; throws naming why it is missing
  return from_array(a, Device::CUDA);
}

// The DLPack export of any tensor: an array-API object on the tensor's memory, kDLCPU or kDLCUDA,
// which implements __dlpack__ and __dlpack_device__ (the tensor's storage stays alive with it).
nb::object dlpack_view(const Tensor& t0) {
  Tensor t = t0.detach();
  const bool on_gpu = t.device() == Device::CUDA;
  // Ember's kernels run on the legacy default stream; finishing them here makes the memory valid
  // on whatever stream the consumer reads it from.
  if (on_gpu) cuda::synchronize();
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  nb::ndarray<nb::array_api> arr(t.raw_data(), shape.size(), shape.data(), owner, strides.data(), dl_dtype(t.dtype()),
                    on_gpu ? nb::device::cuda::value : nb::device::cpu::value, 0);
  return arr.cast();
}

Shape shape_from_args(const nb::args& args) {
  // x.reshape(2, 3) and x.reshape((2, 3)) both work, as in NumPy and PyTorch.
  if (args.size() == 1 && !nb::isinstance<nb::int_>(args[0])) return nb::cast<Shape>(args[0]);
  return nb::cast<Shape>(args);
}

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int64_t v : s) l.append(v);
  return nb::tuple(l);
}

}  // namespace

nb::object to_ndarray(const Tensor& t0) {
  Tensor t = t0.detach();
  // As in PyTorch: NumPy arrays live in host memory, so a GPU tensor is never copied behind the user's back.
  EMBER_CHECK(t.device() == Device::CPU, "numpy(): the tensor is on ", t.device(),
              "; NumPy arrays live in host memory: call .cpu() first (x.cpu().numpy())");
  EMBER_CHECK(t.dtype() != DType::BFloat16, "numpy(): NumPy has no bfloat16 dtype; convert first ",
              "(x.float().numpy()), or share the memory with a DLPack consumer that has one (torch.from_dlpack)");
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  nb::ndarray<nb::numpy> arr(t.raw_data(), shape.size(), shape.data(), owner, strides.data(), dl_dtype(t.dtype()));
  return arr.cast();
}

Tensor as_tensor(nb::handle h, const char* what) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  nb::object mod = nb::module_::import_("ember");
  nb::object t = mod.attr("tensor")(h);
  if (nb::isinstance<Tensor>(t)) return nb::cast<Tensor>(t);
  throw Error(str(what, ": expected an ember.Tensor or a NumPy array"));
}

std::vector<Tensor> as_tensors(nb::handle h, const char* what) {
  if (nb::isinstance<Tensor>(h)) return {nb::cast<Tensor>(h)};
  EMBER_CHECK(nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h), what,
              ": expected a Tensor or a tuple of Tensors");
  std::vector<Tensor> out;
  for (nb::handle x : h) out.push_back(as_tensor(x, what));
  return out;
}

void bind_tensor(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::enum_<DType>(m, "DType")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("int64", DType::Int64)
      .value("bool", DType::Bool)
      .value("bfloat16", DType::BFloat16)
      .value("float16", DType::Float16)
      .def_prop_ro("itemsize", [](DType t) { return itemsize(t); })
      .def_prop_ro("is_floating_point", [](DType t) { return is_floating(t); });
  nb::enum_<Device>(m, "Device").value("cpu", Device::CPU).value("cuda", Device::CUDA);
  m.def("_parse_device", &parse_device);

  cls.def(nb::init<>())
      .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_prop_ro("strides", [](const Tensor& t) { return shape_tuple(t.strides()); }, "in elements")
      .def_prop_ro("offset", &Tensor::offset)
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("size", [](const Tensor& t, std::optional<int64_t> d) -> nb::object {
        if (d) return nb::int_(t.size(*d));
        return shape_tuple(t.shape());
      }, nb::arg("dim") = nb::none())
      .def_prop_ro("defined", &Tensor::defined)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("__len__", [](const Tensor& t) {
        EMBER_CHECK(t.dim() > 0, "len() of a 0-d tensor");
        return t.size(0);
      })
      .def("item", &Tensor::item)
      .def("numpy", &to_ndarray, "a NumPy array sharing this tensor's memory (CPU only)")
      .def_static("_from_ndarray", &from_ndarray, nb::arg("array"))
      .def_static("_from_cuda_dlpack", &from_cuda_dlpack, nb::arg("array"))
      .def("_dlpack_view", &dlpack_view)
      .def("_data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); })
      .def("to_string", &Tensor::to_string, nb::arg("max_per_dim") = 6)
      .def("__repr__", [](const Tensor& t) {
        if (!t.defined()) return std::string("tensor(undefined)");
        std::string s = t.to_string();  // "tensor([...], shape=[..], dtype=..)"
        if (t.requires_grad() && !s.empty() && s.back() == ')') s.insert(s.size() - 1, ", requires_grad=True");
        return s;
      })
      // views and copies, recorded when traced
      .def("reshape", [](const Tensor& t, nb::args a) { return t.reshape(shape_from_args(a)); })
      .def("view", [](const Tensor& t, nb::args a) { return t.view(shape_from_args(a)); })
      .def("permute", [](const Tensor& t, nb::args a) { return t.permute(shape_from_args(a)); })
      .def("expand", [](const Tensor& t, nb::args a) { return t.expand(shape_from_args(a)); })
      .def("transpose", &Tensor::transpose, nb::arg("dim0"), nb::arg("dim1"))
      .def("t", &Tensor::t)
      .def_prop_ro("T", &Tensor::t)
      .def("slice", &Tensor::slice, nb::arg("dim"), nb::arg("start"), nb::arg("end"), nb::arg("step") = 1)
      .def("narrow", &Tensor::narrow, nb::arg("dim"), nb::arg("start"), nb::arg("length"))
      .def("unsqueeze", &Tensor::unsqueeze, nb::arg("dim"))
      .def("squeeze", &Tensor::squeeze, nb::arg("dim"))
      .def("flatten", &Tensor::flatten)
      .def("contiguous", &Tensor::contiguous, release_gil())
      .def("clone", &Tensor::clone, release_gil())
      .def("to", [](const Tensor& t, DType d) { return t.to(d); }, nb::arg("dtype"), release_gil())
      .def("to", [](const Tensor& t, Device d) { return t.to(d); }, nb::arg("device"), release_gil())
      .def("detach", &Tensor::detach)
      // PyTorch-style autograd on leaves
      .def("requires_grad_", [](Tensor& t, bool on) -> Tensor& { return t.requires_grad_(on); },
           nb::arg("requires_grad") = true, nb::rv_policy::reference)
      .def_prop_ro("requires_grad", &Tensor::requires_grad)
      .def_prop_ro("grad", [](const Tensor& t) -> std::optional<Tensor> {
        Tensor g = t.grad();
        if (!g.defined()) return std::nullopt;
        return g;
      })
      .def("zero_grad", &Tensor::zero_grad)
      .def("backward", [](const Tensor& t, std::optional<Tensor> g) { t.backward(g ? *g : Tensor()); },
           nb::arg("cotangent") = nb::none(), release_gil())
      .def_prop_ro("is_traced", &Tensor::is_traced)
      // in-place writes, not recorded (optimizers, initialisers, x[...] = v)
      .def("copy_", &Tensor::copy_, nb::arg("src"), nb::rv_policy::reference, release_gil())
      .def("fill_", &Tensor::fill_, nb::arg("value"), nb::rv_policy::reference, release_gil())
      .def("zero_", &Tensor::zero_, nb::rv_policy::reference, release_gil())
      // in-place arithmetic (ops/inplace_methods.cpp): refused on tracked tensors unless under no_grad
      .def("add_", [](Tensor& t, const Tensor& o, double alpha) -> Tensor& { return t.add_(o, alpha); }, nb::arg("other"),
           nb::arg("alpha") = 1.0, nb::rv_policy::reference, release_gil())
      .def("add_", [](Tensor& t, double v) -> Tensor& { return t.add_(v); }, nb::arg("value"), nb::rv_policy::reference,
           release_gil())
      .def("sub_", [](Tensor& t, const Tensor& o) -> Tensor& { return t.sub_(o); }, nb::arg("other"),
           nb::rv_policy::reference, release_gil())
      .def("sub_", [](Tensor& t, double v) -> Tensor& { return t.add_(-v); }, nb::arg("value"), nb::rv_policy::reference,
           release_gil())
      .def("mul_", [](Tensor& t, const Tensor& o) -> Tensor& { return t.mul_(o); }, nb::arg("other"),
           nb::rv_policy::reference, release_gil())
      .def("mul_", [](Tensor& t, double v) -> Tensor& { return t.mul_(v); }, nb::arg("value"), nb::rv_policy::reference,
           release_gil())
      .def("div_", [](Tensor& t, const Tensor& o) -> Tensor& { return t.div_(o); }, nb::arg("other"),
           nb::rv_policy::reference, release_gil())
      .def("div_", [](Tensor& t, double v) -> Tensor& { return t.div_(v); }, nb::arg("value"), nb::rv_policy::reference,
           release_gil())
      .def("clamp_", &Tensor::clamp_, nb::arg("min"), nb::arg("max"), nb::rv_policy::reference, release_gil());

  // Operators with tensors and Python numbers (a number takes the tensor's dtype).
  cls.def("__add__", [](const Tensor& a, const Tensor& b) { return a + b; }, nb::is_operator(), release_gil())
      .def("__add__", [](const Tensor& a, double b) { return a + b; }, nb::is_operator(), release_gil())
      .def("__radd__", [](const Tensor& a, double b) { return b + a; }, nb::is_operator(), release_gil())
      .def("__sub__", [](const Tensor& a, const Tensor& b) { return a - b; }, nb::is_operator(), release_gil())
      .def("__sub__", [](const Tensor& a, double b) { return a - b; }, nb::is_operator(), release_gil())
      .def("__rsub__", [](const Tensor& a, double b) { return b - a; }, nb::is_operator(), release_gil())
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return a * b; }, nb::is_operator(), release_gil())
      .def("__mul__", [](const Tensor& a, double b) { return a * b; }, nb::is_operator(), release_gil())
      .def("__rmul__", [](const Tensor& a, double b) { return b * a; }, nb::is_operator(), release_gil())
      .def("__truediv__", [](const Tensor& a, const Tensor& b) { return a / b; }, nb::is_operator(), release_gil())
      .def("__truediv__", [](const Tensor& a, double b) { return a / b; }, nb::is_operator(), release_gil())
      .def("__rtruediv__", [](const Tensor& a, double b) { return b / a; }, nb::is_operator(), release_gil())
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, nb::is_operator(), release_gil())
      .def("__pow__", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, nb::is_operator(), release_gil())
      .def("__pow__", [](const Tensor& a, double b) { return pow(a, b); }, nb::is_operator(), release_gil())
      .def("__rpow__", [](const Tensor& a, double b) { return pow(scalar_like(a, b), a); }, nb::is_operator(), release_gil())
      .def("__neg__", [](const Tensor& a) { return -a; }, release_gil())
      .def("__gt__", [](const Tensor& a, const Tensor& b) { return gt(a, b); }, nb::is_operator())
      .def("__gt__", [](const Tensor& a, double b) { return gt(a, scalar_like(a, b)); }, nb::is_operator())
      .def("__ge__", [](const Tensor& a, const Tensor& b) { return ge(a, b); }, nb::is_operator())
      .def("__ge__", [](const Tensor& a, double b) { return ge(a, scalar_like(a, b)); }, nb::is_operator())
      .def("__lt__", [](const Tensor& a, const Tensor& b) { return lt(a, b); }, nb::is_operator())
      .def("__lt__", [](const Tensor& a, double b) { return lt(a, scalar_like(a, b)); }, nb::is_operator())
      .def("__le__", [](const Tensor& a, const Tensor& b) { return le(a, b); }, nb::is_operator())
      .def("__le__", [](const Tensor& a, double b) { return le(a, scalar_like(a, b)); }, nb::is_operator())
      .def("__and__", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }, nb::is_operator())
      .def("__or__", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }, nb::is_operator())
      .def("__xor__", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }, nb::is_operator())
      .def("__invert__", [](const Tensor& a) { return logical_not(a); });

  // factories
  m.def("zeros", &zeros, nb::arg("shape"), nb::arg("dtype") = DType::Float32, nb::arg("device") = Device::CPU);
  m.def("ones", &ones, nb::arg("shape"), nb::arg("dtype") = DType::Float32, nb::arg("device") = Device::CPU);
  m.def("empty", &empty, nb::arg("shape"), nb::arg("dtype") = DType::Float32, nb::arg("device") = Device::CPU);
  m.def("full", &full, nb::arg("shape"), nb::arg("value"), nb::arg("dtype") = DType::Float32,
        nb::arg("device") = Device::CPU);
  m.def("zeros_like", &zeros_like);
  m.def("ones_like", &ones_like);
  m.def("full_like", &full_like);
  m.def("scalar", &scalar, nb::arg("value"), nb::arg("dtype") = DType::Float32, nb::arg("device") = Device::CPU);
  m.def("arange", [](int64_t start, std::optional<int64_t> end, int64_t step, DType d) {
    return end ? arange(start, *end, step, d) : arange(0, start, step, d);
  }, nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, nb::arg("dtype") = DType::Int64);
  m.def("manual_seed", &manual_seed, nb::arg("seed"));
  m.def("rand", [](const Shape& s, DType d) { return rand(s, d); }, nb::arg("shape"), nb::arg("dtype") = DType::Float32);
  m.def("randn", [](const Shape& s, DType d) { return randn(s, d); }, nb::arg("shape"), nb::arg("dtype") = DType::Float32);
  m.def("uniform", [](const Shape& s, double lo, double hi, DType d) { return uniform(s, lo, hi, d); },
        nb::arg("shape"), nb::arg("low"), nb::arg("high"), nb::arg("dtype") = DType::Float32);
  m.def("randint", [](int64_t lo, int64_t hi, const Shape& s) { return randint(s, lo, hi); }, nb::arg("low"),
        nb::arg("high"), nb::arg("shape"));
  m.def("memory_stats", [](Device d) {
    MemoryStats s = memory_stats(d);
    nb::dict out;
    out["current_bytes"] = s.current_bytes;
    out["peak_bytes"] = s.peak_bytes;
    out["cached_bytes"] = s.cached_bytes;
    out["allocations"] = s.allocations;
    return out;
  }, nb::arg("device") = Device::CPU);
}

}  // namespace ember::py
