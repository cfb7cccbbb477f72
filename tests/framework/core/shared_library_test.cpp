// load_sibling_library and library_symbol: what a caller learns when a backend's or a study's
// library is missing, and that a present one's C entry point is found and runs.
#include "framework/core/shared_library.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/matmul/matmul.h"

namespace ember {
namespace {

TEST(SharedLibrary, AMissingLibraryIsReportedWithWhereItWasLookedFor) {
  const LoadedLibrary& lib = load_sibling_library("libember_no_such_library.so", nullptr);
  EXPECT_FALSE(lib.found);
  EXPECT_FALSE(lib.ok);
  EXPECT_EQ(lib.handle, nullptr);
  ASSERT_GE(lib.path.size(), std::string("/libember_no_such_library.so").size());
  EXPECT_EQ(lib.path.substr(lib.path.size() - 28), "/libember_no_such_library.so");
  EXPECT_EQ(lib.error, "no " + lib.path);
  EXPECT_EQ(library_symbol(lib, "anything"), nullptr);
  // The answer is kept: a second call returns the same record.
  EXPECT_EQ(&load_sibling_library("libember_no_such_library.so", nullptr), &lib);
}

TEST(SharedLibrary, TheEnvironmentVariableOverridesTheFolder) {
  ::setenv("EMBER_TEST_SHARED_LIBRARY_PATH", "/nonexistent/folder/libother.so", 1);
  const LoadedLibrary& lib = load_sibling_library("libember_test_override.so", "EMBER_TEST_SHARED_LIBRARY_PATH");
  ::unsetenv("EMBER_TEST_SHARED_LIBRARY_PATH");
  EXPECT_EQ(lib.path, "/nonexistent/folder/libother.so");
  EXPECT_FALSE(lib.found);
}

TEST(SharedLibrary, TheCudaMatmulStudyOpensAndRegistersByItsCName) {
#ifndef EMBER_HAS_CUDA
  GTEST_SKIP() << "this build has no CUDA backend, so no libember_matmul_cuda_study.so to open";
#else
  // What ember.register_study_kernels(cuda=True) does from Python; registering needs no GPU.
  const LoadedLibrary& lib = load_sibling_library("libember_matmul_cuda_study.so", nullptr);
  ASSERT_TRUE(lib.ok) << lib.path << ": " << lib.error;
  EXPECT_EQ(library_symbol(lib, "ember_no_such_symbol"), nullptr);
  auto* entry = reinterpret_cast<void (*)()>(library_symbol(lib, "ember_matmul_cuda_study_register"));
  ASSERT_NE(entry, nullptr);
  entry();
  entry();  // once per process: again does nothing
  std::vector<std::string> names = matmul_variants(Device::CUDA);
  for (const char* v : {"naive", "tiled", "register_tiled", "register_tiled_db"})
    EXPECT_EQ(std::count(names.begin(), names.end(), v), 1) << v;
#endif
}

}  // namespace
}  // namespace ember
