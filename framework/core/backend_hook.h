// BackendHook: a function that one library calls and another library, loaded later, provides.
//
// The ops call their CUDA kernels through hooks (ops/cuda_kernels.h) so that the ops library
// never links the CUDA runtime: libember_cuda.so fills the hooks when it is loaded, which happens
// on the first CUDA tensor (framework/core/cuda_loader.cpp). A CPU-only program therefore maps no CUDA
// library at all. The constructor is constexpr, so a hook is ready before any static initialiser
// runs, whichever library's initialisers run first.
#pragma once
#include <utility>

namespace ember {

namespace hook_detail {
[[noreturn]] void missing(const char* name);  // throws ember::Error naming the hook
}

template <class Sig>
class BackendHook;

template <class R, class... As>
class BackendHook<R(As...)> {
 public:
  using Fn = R (*)(As...);
  constexpr explicit BackendHook(const char* name) : name_(name) {}
  BackendHook(const BackendHook&) = delete;
  BackendHook& operator=(const BackendHook&) = delete;

  R operator()(As... args) const {
    if (!fn_) hook_detail::missing(name_);
    return fn_(std::forward<As>(args)...);
  }
  void set(Fn fn) { fn_ = fn; }
  bool filled() const { return fn_ != nullptr; }
  const char* name() const { return name_; }

 private:
  const char* name_;
  Fn fn_ = nullptr;
};

}  // namespace ember
