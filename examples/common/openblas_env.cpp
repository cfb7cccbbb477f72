// openblas_env: the OpenBLAS/Python peer decision of openblas_core.h and peer_python.h for shell
// scripts (the C++ bench programs include the headers instead).
//   openblas_env                   the `env` arguments to run Ember's OpenBLAS (this build's) with
//   openblas_env --python PY       ... to run PY's NumPy/SciPy/torch with
//   openblas_env --which-python    the peer python (the bench-deps venv when present, else /usr/bin/python3)
//   openblas_env [--python PY] --json   the decision (and PY's torch) as JSON
//   e.g.  PY=$(build/bin/openblas_env --which-python); $(build/bin/openblas_env --python "$PY") "$PY" peer.py
#include <cstring>
#include <iostream>

#include "examples/common/openblas_core.h"
#include "examples/common/peer_python.h"
#include "ops/matmul/cpu/kernels.h"

using namespace ember::bench;

int main(int argc, char** argv) {
  std::string own = openblas::core_from_description(ember::cpu::blas_description());
  if (openblas::probe_requested()) {
    std::cout << own << "\n";
    return 0;
  }
  std::string python;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--which-python")) {
      std::cout << peer::default_python() << "\n";
      return 0;
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (!std::strcmp(argv[i], "--python") && i + 1 < argc) {
      python = argv[++i];
    } else {
      std::cerr << "usage: openblas_env [--python PY] [--json] | --which-python\n";
      return 2;
    }
  }
  if (!python.empty()) {
    peer::PythonPeer p = peer::python_peer(python);
    if (json) std::cout << p.to_json().dump(1) << "\n";
    else std::cout << p.prefix() << "\n";
    std::cerr << "peer: " << p.summary() << "\n";
    return 0;
  }
  if (own.empty()) {
    std::cerr << "openblas_env: OpenBLAS is not installed on this machine\n";
    return 1;
  }
  openblas::Decision d = openblas::decide([](const std::string& prefix) { return openblas::probe_self(prefix); });
  if (json) std::cout << d.to_json().dump(1) << "\n";
  else std::cout << d.prefix() << "\n";
  return 0;
}
