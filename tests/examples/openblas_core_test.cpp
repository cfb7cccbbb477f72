// The OPENBLAS_CORETYPE decision of examples/common/openblas_core.h for the CPUs of issue 17.
#include <gtest/gtest.h>

#include "examples/common/openblas_core.h"

namespace ob = ember::bench::openblas;

namespace {

// /proc/cpuinfo blocks (flags abridged to what matters plus neighbours).
const char* kXeonSpr =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n"
    "model name\t: INTEL(R) XEON(R) PLATINUM 8581C\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512cd avx512bw avx512vl "
    "avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n";
const char* kZen5 =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC 9B45\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512cd avx512bw avx512vl "
    "avx512_bf16 avx512vnni\n";
const char* kAvx2Amd =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2\n";
const char* kAvx2Intel =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 63\nmodel name\t: Xeon E5-2680 v3\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2\n";

ob::Choice choose(const char* cpuinfo, const std::string& detected, const std::string& inherited) {
  ob::Cpu c = ob::parse_cpuinfo(cpuinfo);
  return ob::choose_coretype(c.flags, c.vendor, detected, inherited);
}

}  // namespace

TEST(OpenblasCore, ParsesTheFirstProcessor) {
  ob::Cpu c = ob::parse_cpuinfo(kXeonSpr);
  EXPECT_EQ(c.vendor, "GenuineIntel");
  EXPECT_EQ(c.family, 6);
  EXPECT_EQ(c.model, 207);
  EXPECT_TRUE(c.flags.count("amx_tile"));
  EXPECT_EQ(ob::cpu_level(c.flags), ob::kAvx512);
  EXPECT_EQ(ob::cpu_level(ob::parse_cpuinfo(kAvx2Amd).flags), ob::kAvx2);
  std::set<std::string> knl_like = {"avx2", "fma", "avx512f"};  // F alone is not what SkylakeX kernels need
  EXPECT_EQ(ob::cpu_level(knl_like), ob::kAvx2);
}

TEST(OpenblasCore, CoreLevels) {
  EXPECT_EQ(ob::core_level("Prescott"), ob::kSse);
  EXPECT_EQ(ob::core_level("NEHALEM"), ob::kSse);
  EXPECT_EQ(ob::core_level("Sandybridge"), ob::kAvx);
  EXPECT_EQ(ob::core_level("Haswell"), ob::kAvx2);
  EXPECT_EQ(ob::core_level("zen"), ob::kAvx2);
  EXPECT_EQ(ob::core_level("SkylakeX"), ob::kAvx512);
  EXPECT_EQ(ob::core_level("Cooperlake"), ob::kAvx512);
  EXPECT_EQ(ob::core_level("NoSuchCore"), ob::kUnknown);
}

TEST(OpenblasCore, XeonWhereOpenblasFallsBackToPrescott) {
  // 0.3.21 does not know family 6 model 207 and runs Prescott: force the best AVX-512 core (with
  // avx512_bf16: Cooperlake, SkylakeX as the fallback).
  ob::Choice c = choose(kXeonSpr, "Prescott", "");
  EXPECT_EQ(c.coretype, "Cooperlake");
  EXPECT_EQ(c.candidates, (std::vector<std::string>{"Cooperlake", "SkylakeX"}));
  // Any pick below AVX-512 on it is a fallback, Haswell included.
  for (const char* below : {"Nehalem", "Sandybridge", "Haswell", "Unknown", ""})
    EXPECT_EQ(choose(kXeonSpr, below, "").coretype, "Cooperlake") << below;
  // An inherited Haswell (or Prescott) is replaced, not kept.
  EXPECT_EQ(choose(kXeonSpr, "Prescott", "Haswell").coretype, "Cooperlake");
  // Without avx512_bf16 SkylakeX is the best.
  std::string no_bf16 = kXeonSpr;
  no_bf16.replace(no_bf16.find(" avx512_bf16"), 12, "");
  EXPECT_EQ(choose(no_bf16.c_str(), "Prescott", "").coretype, "SkylakeX");
  // A newer OpenBLAS that knows the CPU is left alone.
  EXPECT_EQ(choose(kXeonSpr, "SapphireRapids", "").coretype, "");
}

TEST(OpenblasCore, Zen5InheritedHaswellIsUnset) {
  // OpenBLAS picks an AVX-512 core on Zen 5 itself: an inherited Haswell forces a worse kernel.
  ob::Choice c = choose(kZen5, "SkylakeX", "Haswell");
  EXPECT_EQ(c.coretype, "");
  EXPECT_TRUE(c.candidates.empty());
  EXPECT_NE(c.reason.find("worse"), std::string::npos) << c.reason;
  EXPECT_EQ(choose(kZen5, "Cooperlake", "").coretype, "");
  // Were its pick only Zen (Haswell-class), that is below the ISA: force the AVX-512 core.
  EXPECT_EQ(choose(kZen5, "Zen", "Haswell").coretype, "Cooperlake");
}

TEST(OpenblasCore, Avx2Machines) {
  EXPECT_EQ(choose(kAvx2Amd, "Zen", "").coretype, "");                // its own pick is right
  EXPECT_EQ(choose(kAvx2Amd, "Zen", "Haswell").coretype, "");         // same level: unset, own pick
  EXPECT_EQ(choose(kAvx2Amd, "Prescott", "").coretype, "Zen");        // fell back: Zen on AMD
  EXPECT_EQ(choose(kAvx2Amd, "Sandybridge", "").coretype, "Zen");
  EXPECT_EQ(choose(kAvx2Intel, "Nehalem", "").coretype, "Haswell");   // ... Haswell on Intel
  EXPECT_EQ(choose(kAvx2Intel, "Haswell", "Prescott").coretype, "");  // an inherited worse core is unset
  // An inherited AVX-512 core on an AVX2 CPU cannot run: unset.
  ob::Choice c = choose(kAvx2Intel, "Haswell", "SkylakeX");
  EXPECT_EQ(c.coretype, "");
  EXPECT_NE(c.reason.find("cannot run"), std::string::npos) << c.reason;
}

TEST(OpenblasCore, DecideTriesCandidatesTheLibraryAccepts) {
  ob::Cpu xeon = ob::parse_cpuinfo(kXeonSpr);
  std::vector<std::string> probed;
  // A library that knows SkylakeX but not Cooperlake: forcing Cooperlake runs its fallback pick.
  auto probe = [&](const std::string& prefix) -> std::string {
    probed.push_back(prefix);
    if (prefix.find("OPENBLAS_CORETYPE=SkylakeX") != std::string::npos) return "SkylakeX";
    return "Prescott";
  };
  ob::Decision d = ob::decide(probe, xeon, "Haswell");
  EXPECT_EQ(d.detected, "Prescott");
  EXPECT_EQ(d.chosen, "SkylakeX");
  EXPECT_EQ(d.actual, "SkylakeX");
  ASSERT_EQ(d.rejected.size(), 1u);
  EXPECT_EQ(probed.front(), "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE");
  EXPECT_EQ(d.prefix(), "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX");
  EXPECT_EQ(d.to_json()["core"], "SkylakeX");
  // A library that accepts nothing: its own pick runs, unset.
  ob::Decision none = ob::decide([](const std::string&) { return std::string("Prescott"); }, xeon, nullptr);
  EXPECT_EQ(none.chosen, "");
  EXPECT_EQ(none.actual, "Prescott");
  EXPECT_EQ(none.prefix(), "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE");
}

TEST(OpenblasCore, CoreFromDescription) {
  EXPECT_EQ(ob::core_from_description("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64 / kernel Zen / threads 2"),
            "Zen");
  EXPECT_EQ(ob::core_from_description(""), "");
}
