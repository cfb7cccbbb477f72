// Which OPENBLAS_CORETYPE a peer runs with: the one place that decides it, for every bench program
// (bench_matmul re-executes itself under it; the Python peers get it as an `env` prefix) and, via
// the openblas_env tool, for the shell scripts. Header-only, like bench.h.
//
// OpenBLAS picks a kernel for the CPU it finds (openblas_get_corename()). A build older than the
// CPU may not know it and fall back far below its ISA: Debian 12's 0.3.21 runs Prescott (SSE3)
// kernels on a Sapphire Rapids Xeon (family 6, model 207) at a fifth of the speed of SkylakeX. An
// inherited OPENBLAS_CORETYPE can force a worse kernel than OpenBLAS would pick itself (Haswell on
// an AVX-512 Zen 5). So: probe what OpenBLAS picks with the variable unset, compare that with the
// CPU's flags, and force the best core only where OpenBLAS fell below the machine's ISA.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace ember::bench::openblas {

// What a decision needs to know about the CPU (the first processor block of /proc/cpuinfo).
struct Cpu {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  int family = -1, model = -1;
  std::string model_name;
  std::set<std::string> flags;
};

inline std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline Cpu parse_cpuinfo(const std::string& text) {
  Cpu c;
  std::istringstream in(text);
  std::string line;
  bool seen_processor = false;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    k.erase(k.find_last_not_of(" \t") + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    if (k == "processor") {
      if (seen_processor) break;  // the first CPU is enough
      seen_processor = true;
    } else if (k == "vendor_id") {
      c.vendor = v;
    } else if (k == "cpu family") {
      c.family = std::atoi(v.c_str());
    } else if (k == "model") {
      c.model = std::atoi(v.c_str());
    } else if (k == "model name") {
      c.model_name = v;
    } else if (k == "flags") {
      std::istringstream fs(v);
      for (std::string f; fs >> f;) c.flags.insert(f);
    }
  }
  return c;
}

inline Cpu read_cpu(const std::string& path = "/proc/cpuinfo") {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_cpuinfo(ss.str());
}

// ISA levels: 1 SSE (up to SSE4.2), 2 AVX, 3 AVX2 + FMA, 4 AVX-512 (F, BW, DQ, VL: what the SkylakeX
// kernels use). 0: a core name this table does not know.
enum Level { kUnknown = 0, kSse = 1, kAvx = 2, kAvx2 = 3, kAvx512 = 4 };

// The ISA level of an OpenBLAS core name (OPENBLAS_CORETYPE values and openblas_get_corename()).
inline int core_level(const std::string& core) {
  static const std::vector<std::pair<int, std::vector<std::string>>> table = {
      {kSse, {"katmai", "coppermine", "northwood", "prescott", "banias", "atom", "core2", "penryn", "dunnington",
              "nehalem", "athlon", "opteron", "opteron_sse3", "barcelona", "nano", "bobcat"}},
      {kAvx, {"sandybridge", "bulldozer", "piledriver", "steamroller", "excavator"}},
      {kAvx2, {"haswell", "zen"}},
      {kAvx512, {"skylakex", "cooperlake", "sapphirerapids"}},
  };
  std::string c = lower(core);
  for (const auto& [level, names] : table)
    if (std::find(names.begin(), names.end(), c) != names.end()) return level;
  return kUnknown;
}

inline int cpu_level(const std::set<std::string>& flags) {
  auto has = [&](const char* f) { return flags.count(f) > 0; };
  if (has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl")) return kAvx512;
  if (has("avx2") && has("fma")) return kAvx2;
  if (has("avx")) return kAvx;
  return kSse;
}

// The coretypes worth forcing on this CPU, best first (OpenBLAS 0.3.21 accepts all of these; an
// older build that rejects one runs its own pick, which decide() notices and then tries the next).
inline std::vector<std::string> best_coretypes(const std::set<std::string>& flags, const std::string& vendor) {
  switch (cpu_level(flags)) {
    case kAvx512:
      if (flags.count("avx512_bf16")) return {"Cooperlake", "SkylakeX"};
      return {"SkylakeX"};
    case kAvx2:
      if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") return {"Zen", "Haswell"};
      return {"Haswell"};
    case kAvx:
      return {"Sandybridge"};
    default:
      return {};
  }
}

struct Choice {
  std::string coretype;                 // the OPENBLAS_CORETYPE to run the peer with; "" = unset
  std::vector<std::string> candidates;  // coretype and the fallbacks to try when it is rejected
  std::string reason;
};

// The decision, a pure function. detected_core: what OpenBLAS picks with OPENBLAS_CORETYPE unset;
// inherited_env: the caller's OPENBLAS_CORETYPE ("" when unset).
inline Choice choose_coretype(const std::set<std::string>& cpu_flags, const std::string& vendor,
                              const std::string& detected_core, const std::string& inherited_env) {
  Choice c;
  int machine = cpu_level(cpu_flags), detected = core_level(detected_core), inherited = core_level(inherited_env);
  std::vector<std::string> best = best_coretypes(cpu_flags, vendor);
  if (detected >= machine || best.empty()) {
    // OpenBLAS's own pick uses the whole ISA: run it, whatever the environment forces.
    c.reason = "OpenBLAS picks " + detected_core + " itself, which uses this CPU's ISA";
    if (!inherited_env.empty()) {
      if (inherited < detected || inherited > machine)
        c.reason += "; the inherited OPENBLAS_CORETYPE=" + inherited_env + " is unset (it forces a " +
                    (inherited > machine ? "kernel this CPU cannot run" : "worse kernel") + ")";
      else
        c.reason += "; the inherited OPENBLAS_CORETYPE=" + inherited_env + " is unset (OpenBLAS's own pick is as good)";
    }
    return c;
  }
  // OpenBLAS fell back below the ISA (it does not know this CPU): force the best core it accepts.
  c.candidates = best;
  c.coretype = best.front();
  c.reason = "OpenBLAS picks " + (detected_core.empty() ? std::string("nothing") : detected_core) +
             " itself, below this CPU's ISA; forcing " + c.coretype;
  if (!inherited_env.empty() && lower(inherited_env) != lower(c.coretype))
    c.reason += " instead of the inherited OPENBLAS_CORETYPE=" + inherited_env;
  return c;
}

// The `env` arguments that run a command with `coretype` ("" = OpenBLAS's own pick). OPENBLAS_L2_SIZE
// is always unset: a forced cache size mistunes the blocking of every kernel.
inline std::string env_prefix(const std::string& coretype) {
  std::string s = "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE";
  if (!coretype.empty()) s += " OPENBLAS_CORETYPE=" + coretype;
  return s;
}

// The stdout of a shell command (trailing whitespace removed); *rc gets its exit status.
inline std::string run_capture(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    if (rc) *rc = -1;
    return out;
  }
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  if (rc) *rc = status;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

// A decision together with what probing showed.
struct Decision {
  std::string cpu, detected, inherited, chosen, actual, reason;
  std::vector<std::string> rejected;  // candidates the library did not accept
  std::string prefix() const { return env_prefix(chosen); }
  nlohmann::json to_json() const {
    return {{"cpu", cpu},       {"detected_core", detected}, {"inherited_coretype", inherited},
            {"coretype", chosen.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen)},
            {"core", actual},   {"rejected", rejected},      {"reason", reason},
            {"env", prefix()}};
  }
  // One line for a table header.
  std::string summary() const {
    return actual + (chosen.empty() ? " (OpenBLAS's own pick" : " (forced: OPENBLAS_CORETYPE=" + chosen) +
           (inherited.empty() ? "" : "; inherited OPENBLAS_CORETYPE=" + inherited) + ")";
  }
};

// probe(prefix) runs the peer's OpenBLAS under `prefix` (an env_prefix()) and returns the core it
// reports ("" when it cannot tell).
inline Decision decide(const std::function<std::string(const std::string&)>& probe, const Cpu& cpu = read_cpu(),
                       const char* inherited_env = std::getenv("OPENBLAS_CORETYPE")) {
  Decision d;
  d.cpu = cpu.model_name + " (" + cpu.vendor + ", family " + std::to_string(cpu.family) + ", model " +
          std::to_string(cpu.model) + ")";
  d.inherited = inherited_env ? inherited_env : "";
  d.detected = probe(env_prefix(""));
  d.actual = d.detected;
  Choice c = choose_coretype(cpu.flags, cpu.vendor, d.detected, d.inherited);
  d.reason = c.reason;
  for (const std::string& cand : c.candidates) {
    std::string got = probe(env_prefix(cand));
    if (lower(got) == lower(cand)) {
      d.chosen = cand, d.actual = got;
      if (cand != c.coretype) d.reason += "; " + c.coretype + " is not accepted by this OpenBLAS, so " + cand;
      return d;
    }
    d.rejected.push_back(cand + " (ran " + got + ")");
  }
  if (!c.candidates.empty()) d.reason += "; OpenBLAS accepted none of them, so its own pick runs";
  return d;
}

// --- the probes ---

// The core in cpu::blas_description()'s "<config> / kernel <core> / threads <n>".
inline std::string core_from_description(const std::string& desc) {
  auto k = desc.find(" / kernel ");
  if (k == std::string::npos) return "";
  std::string rest = desc.substr(k + 10);
  return rest.substr(0, rest.find(' '));
}

// For programs that call OpenBLAS in-process (bench_matmul): `exe` run with EMBER_OPENBLAS_PROBE=1
// must print its OpenBLAS core and exit (see probe_requested()).
inline std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);  // resolved here: in `env`, it is env
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}
inline std::string probe_self(const std::string& prefix, const std::string& exe = self_exe()) {
  return run_capture(prefix + " EMBER_OPENBLAS_PROBE=1 '" + exe + "'");
}
inline bool probe_requested() { return std::getenv("EMBER_OPENBLAS_PROBE") != nullptr; }

// For a Python peer: the core of the OpenBLAS that NumPy loads in `python` (scripts/peer_info.py).
inline std::string probe_python(const std::string& prefix, const std::string& python, const std::string& source_dir) {
  return run_capture(prefix + " '" + python + "' '" + source_dir + "/scripts/peer_info.py' --core 2>/dev/null");
}

inline Decision from_json(const nlohmann::json& j) {
  Decision d;
  d.cpu = j.value("cpu", ""), d.detected = j.value("detected_core", ""), d.inherited = j.value("inherited_coretype", "");
  d.chosen = j["coretype"].is_string() ? j["coretype"].get<std::string>() : "";
  d.actual = j.value("core", ""), d.reason = j.value("reason", "");
  d.rejected = j.value("rejected", std::vector<std::string>{});
  return d;
}

// For programs that call OpenBLAS in-process (its core is fixed when the library loads): decides for
// this executable and, where its environment differs from the decision, re-executes it under the
// decision, once. Call first thing in main(), after answering probe_requested(). `own_core` is the
// core this process runs (e.g. from cpu::blas_description()).
inline Decision apply_to_self(char** argv, const std::function<std::string()>& own_core) {
  if (const char* done = std::getenv("EMBER_OPENBLAS_DECISION")) {
    Decision d = from_json(nlohmann::json::parse(done, nullptr, false).is_discarded() ? nlohmann::json::object()
                                                                                    : nlohmann::json::parse(done));
    unsetenv("EMBER_OPENBLAS_DECISION");  // not for the children
    d.actual = own_core();
    return d;
  }
  Decision d = decide([](const std::string& prefix) { return probe_self(prefix); });
  const char* cur = std::getenv("OPENBLAS_CORETYPE");
  bool same = (cur ? std::string(cur) : std::string()) == d.chosen && !std::getenv("OPENBLAS_L2_SIZE");
  if (same) {
    d.actual = own_core();
    return d;
  }
  unsetenv("OPENBLAS_L2_SIZE");
  if (d.chosen.empty()) unsetenv("OPENBLAS_CORETYPE");
  else setenv("OPENBLAS_CORETYPE", d.chosen.c_str(), 1);
  setenv("EMBER_OPENBLAS_DECISION", d.to_json().dump().c_str(), 1);
  std::fflush(stdout);
  execv(self_exe().c_str(), argv);
  d.reason += "; re-executing under it failed, so the inherited environment's core runs";  // only if execv failed
  d.actual = own_core();
  return d;
}

}  // namespace ember::bench::openblas
