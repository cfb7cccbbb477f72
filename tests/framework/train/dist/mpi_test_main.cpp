// main() of ember_mpi_tests: every rank runs every test, since each collective needs all ranks.
// Only rank 0 prints gtest's report (both outputs interleaved are unreadable); any rank's failure
// is its exit status, which mpirun passes on.
#include <gtest/gtest.h>

#include <cstdio>

#include "ember.h"

// What dist::init() had opened when it returned, for DistMpi.CpuJobOpensNeitherNcclNorCuda.
bool nccl_loaded_after_init = false, cuda_loaded_after_init = false;

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ember::dist::Communicator& c = ember::dist::init({"mpi", "auto"});
  nccl_loaded_after_init = ember::dist::nccl_loaded();
  cuda_loaded_after_init = ember::dist::cuda_loaded();
  if (c.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  if (rc != 0) std::fprintf(stderr, "rank %d: tests failed\n", c.rank());
  ember::dist::finalize();
  return rc;
}
