// Which Python runs the NumPy/SciPy/PyTorch peers, with which OPENBLAS_CORETYPE, and which torch it
// has: the one place for it (the bench programs' --python defaults; the shell scripts ask the
// openblas_env tool, which uses this header). Header-only; the ember_bench target defines
// EMBER_SOURCE_DIR.
//
// The Python: $EMBER_PEER_PYTHON, else the peer virtual environment that `./run.sh bench-deps`
// creates ($EMBER_PEER_VENV, default ~/.cache/ember/peer-venv: PyPI's torch 2.x, NumPy, SciPy,
// threadpoolctl), else /usr/bin/python3 (Debian's packages).
#pragma once
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "examples/common/openblas_core.h"

namespace ember::bench::peer {

inline std::string source_dir() {
#ifdef EMBER_SOURCE_DIR
  return EMBER_SOURCE_DIR;
#else
  return ".";
#endif
}

inline std::string venv_dir() {
  if (const char* v = std::getenv("EMBER_PEER_VENV"); v && *v) return v;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.cache/ember/peer-venv";
}

inline std::string default_python() {
  if (const char* p = std::getenv("EMBER_PEER_PYTHON"); p && *p) return p;
  std::string venv = venv_dir() + "/bin/python";
  if (access(venv.c_str(), X_OK) == 0) return venv;
  return "/usr/bin/python3";
}

// Everything a table header or JSON needs about a Python peer: the OpenBLAS decision for the
// OpenBLAS its NumPy loads, and peer_info.py's report run under that decision (the core that ran,
// torch's version, BLAS and scaled_dot_product_attention).
struct PythonPeer {
  std::string python;
  openblas::Decision openblas;
  nlohmann::json info;  // scripts/peer_info.py's document; {"error": ...} when it failed
  std::string prefix() const { return openblas.prefix(); }
  std::string summary() const {
    std::string s = info.contains("summary") ? info["summary"].get<std::string>() : python + " (peer_info.py failed)";
    return s + "; OpenBLAS core " + openblas.summary();
  }
  nlohmann::json to_json() const { return {{"python", python}, {"openblas", openblas.to_json()}, {"info", info}}; }
};

inline PythonPeer python_peer(const std::string& python = default_python()) {
  PythonPeer p;
  p.python = python;
  std::string src = source_dir();
  p.openblas = openblas::decide([&](const std::string& prefix) { return openblas::probe_python(prefix, python, src); });
  int rc = 0;
  std::string out = openblas::run_capture(p.prefix() + " '" + python + "' '" + src + "/scripts/peer_info.py'", &rc);
  try {
    p.info = rc == 0 ? nlohmann::json::parse(out) : nlohmann::json{{"error", "peer_info.py exited with " + std::to_string(rc)}};
  } catch (const std::exception& e) {
    p.info = {{"error", std::string("peer_info.py printed no JSON: ") + e.what()}};
  }
  if (p.info.contains("openblas_core") && p.info["openblas_core"].is_string() &&
      !p.info["openblas_core"].get<std::string>().empty())
    p.openblas.actual = p.info["openblas_core"].get<std::string>();  // the core under the final environment
  return p;
}

// python_peer() once per python per process (each probe imports NumPy and torch: seconds).
inline const PythonPeer& cached_python_peer(const std::string& python = default_python()) {
  static std::map<std::string, PythonPeer> cache;
  auto it = cache.find(python);
  if (it == cache.end()) it = cache.emplace(python, python_peer(python)).first;
  return it->second;
}

}  // namespace ember::bench::peer
