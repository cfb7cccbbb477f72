// ember::Error becomes ember.Error (a RuntimeError) with its message in Python's spelling: the
// library's messages name C++ (".to(DType::Float32)", "NoGradGuard"), which a Python user writes
// as ".to(ember.float32)" and "ember.no_grad()". Bytes that are not UTF-8 (a file name, say)
// arrive as U+FFFD instead of turning the error into a UnicodeDecodeError.
#include <cstring>
#include <utility>

#include "bindings.h"

namespace ember::py {

std::string pythonic_message(std::string s) {
  static const std::pair<const char*, const char*> kSpellings[] = {
      {".to(DType::Float32)", ".to(ember.float32)"},
      {".to(DType::Float64)", ".to(ember.float64)"},
      {".to(DType::Int64)", ".to(ember.int64)"},
      {".to(DType::Bool)", ".to(ember.bool)"},
      {"under NoGradGuard", "under ember.no_grad()"},
  };
  for (const auto& [from, to] : kSpellings) {
    const size_t n = std::strlen(from), m = std::strlen(to);
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + m)) s.replace(p, n, to);
  }
  return s;
}

void bind_errors(nb::module_& m) {
  // Never freed: a static would drop its reference after the interpreter has finalised.
  auto* error = new nb::exception<ember::Error>(m, "Error", PyExc_RuntimeError);
  // Registered after nb::exception's own translator, so it is tried first.
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const ember::Error& e) {
          const std::string msg = pythonic_message(e.what());
          PyObject* text = PyUnicode_DecodeUTF8(msg.data(), Py_ssize_t(msg.size()), "replace");
          if (!text) return;  // out of memory: the decode's own exception stands
          PyErr_SetObject(static_cast<PyObject*>(type), text);
          Py_DECREF(text);
        }
      },
      error->ptr());
}

}  // namespace ember::py
