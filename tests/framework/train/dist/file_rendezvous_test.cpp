// The rendezvous file store: rank 0's bytes reach the other ranks through one file; a missing,
// truncated, corrupted or stale file is an ember::Error after the timeout, never a crash or a
// wrong id.
#include "framework/train/dist/file_rendezvous.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "ember.h"
#include "test_util.h"

using namespace ember;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint8_t> random_blob(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> b(n);
  for (uint8_t& x : b) x = uint8_t(g());
  return b;
}

// A fresh path in a fresh folder per test.
class DistRendezvous : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ember_rdv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/id";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::vector<uint8_t> read_file() {
    std::ifstream f(path_, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
  }
  void write_file(const std::vector<uint8_t>& bytes) {
    std::ofstream f(path_, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  std::string dir_, path_;
};

TEST_F(DistRendezvous, TwoThreadsExchangeABlob) {
  const std::vector<uint8_t> blob = random_blob(128, 7);
  std::vector<uint8_t> got;
  // The reader starts first and must wait for the writer.
  std::thread reader([&] { got = dist::await_rendezvous(path_, "JOB=1", 2, 1, 128, 10.0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  dist::publish_rendezvous(path_, "JOB=1", 2, blob);
  reader.join();
  EXPECT_EQ(got, blob);
  dist::remove_rendezvous(path_);
  EXPECT_EQ(access(path_.c_str(), F_OK), -1);
  EXPECT_NO_THROW(dist::remove_rendezvous(path_));  // already gone is fine
}

TEST_F(DistRendezvous, ForkedProcessesExchangeABlob) {
  const std::vector<uint8_t> blob = random_blob(128, 11);
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // rank 0, in its own process; nothing but the write, then leave
    int rc = 0;
    try {
      usleep(30000);
      dist::publish_rendezvous(path_, "", 3, blob);
    } catch (...) {
      rc = 1;
    }
    _exit(rc);
  }
  std::vector<uint8_t> got, got2;
  EXPECT_NO_THROW(got = dist::await_rendezvous(path_, "", 3, 1, 128, 10.0));
  EXPECT_NO_THROW(got2 = dist::await_rendezvous(path_, "", 3, 2, 128, 10.0));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(got, blob);
  EXPECT_EQ(got2, blob);
}

TEST_F(DistRendezvous, ShareThroughFile) {
  std::vector<uint8_t> root = random_blob(128, 3), other(128, 0);
  std::thread reader([&] { dist::share_through_file(path_, "J", 1, 2, 10.0)(other.data(), other.size()); });
  dist::share_through_file(path_, "J", 0, 2, 10.0)(root.data(), root.size());
  reader.join();
  EXPECT_EQ(other, root);
}

TEST_F(DistRendezvous, NoFileTimesOutNamingFileRankAndSeconds) {
  const auto t0 = Clock::now();
  try {
    dist::await_rendezvous(path_, "", 4, 3, 128, 0.3);
    ADD_FAILURE() << "expected a timeout";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path_), std::string::npos) << m;
    EXPECT_NE(m.find("rank 3 of 4 waited 0."), std::string::npos) << m;  // 0.3 s and a little
    EXPECT_NE(m.find(" s for rank 0's file"), std::string::npos) << m;
    EXPECT_NE(m.find("no such file yet"), std::string::npos) << m;
    EXPECT_NE(m.find("EMBER_RENDEZVOUS_FILE"), std::string::npos) << m;
  }
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(waited, 0.3);
  EXPECT_LT(waited, 10.0);
}

TEST_F(DistRendezvous, TruncatedFile) {
  dist::publish_rendezvous(path_, "J", 2, random_blob(128, 5));
  const std::vector<uint8_t> whole = read_file();
  write_file(std::vector<uint8_t>(whole.begin(), whole.begin() + int64_t(whole.size() / 2)));
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "truncated");
  write_file(std::vector<uint8_t>(whole.begin(), whole.begin() + 10));
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "truncated (10 bytes");
  write_file({});
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "truncated (0 bytes");
}

TEST_F(DistRendezvous, CorruptedFile) {
  const std::vector<uint8_t> blob = random_blob(128, 9);
  dist::publish_rendezvous(path_, "J", 2, blob);
  std::vector<uint8_t> bad = read_file();
  bad[bad.size() - 20] ^= 0x5a;  // inside the payload
  write_file(bad);
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "corrupted");
  bad = read_file();
  bad[0] = 'X';
  write_file(bad);
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "wrong magic");
  std::vector<uint8_t> longer = read_file();
  longer[0] = 'E';
  longer.push_back(1);
  write_file(longer);
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "J", 2, 1, 128, 0.3), "longer than its header says");
}

TEST_F(DistRendezvous, StaleFileOfAnotherJobOrWorldSize) {
  dist::publish_rendezvous(path_, "SLURM_JOB_ID=41", 2, random_blob(128, 1));
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "SLURM_JOB_ID=42", 2, 1, 128, 0.3), "stale file");
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "SLURM_JOB_ID=42", 2, 1, 128, 0.3), "SLURM_JOB_ID=41, world size 2");
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "SLURM_JOB_ID=41", 4, 1, 128, 0.3), "world size 4");
  EXPECT_EMBER_ERROR(dist::await_rendezvous(path_, "SLURM_JOB_ID=41", 2, 1, 64, 0.3), "payload is 128 bytes, expected 64");
}

TEST_F(DistRendezvous, ParseSaysWhatIsWrong) {
  const std::vector<uint8_t> blob = random_blob(128, 2);
  dist::publish_rendezvous(path_, "J", 2, blob);
  const std::vector<uint8_t> file = read_file();
  std::vector<uint8_t> payload;
  EXPECT_EQ(dist::parse_rendezvous(file, "J", 2, 128, &payload), "");
  EXPECT_EQ(payload, blob);
  EXPECT_NE(dist::parse_rendezvous(file, "K", 2, 128, nullptr).find("another job"), std::string::npos);
  // Every single-byte change is caught (header, token, writer, payload or checksum).
  for (size_t i = 0; i < file.size(); i += 7) {
    std::vector<uint8_t> bad = file;
    bad[i] ^= 0x01;
    EXPECT_NE(dist::parse_rendezvous(bad, "J", 2, 128, nullptr), "") << "byte " << i;
  }
}

TEST_F(DistRendezvous, UnwritableFolderIsAnError) {
  EXPECT_EMBER_ERROR(dist::publish_rendezvous(dir_ + "/no/such/folder/id", "", 2, random_blob(8, 1)), "cannot create");
  EXPECT_EMBER_ERROR(dist::publish_rendezvous("", "", 2, random_blob(8, 1)), "path is empty");
}

TEST(DistRendezvousToken, FromTheLaunchersEnvironment) {
  const char* names[] = {"EMBER_RENDEZVOUS_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PBS_JOBID", "LSB_JOBID",
                         "FLUX_JOB_ID"};
  for (const char* n : names) ASSERT_EQ(std::getenv(n), nullptr) << n << " is set; the test needs it unset";
  EXPECT_EQ(dist::rendezvous_job_token(), "");
  setenv("SLURM_JOB_ID", "1234", 1);
  EXPECT_EQ(dist::rendezvous_job_token(), "SLURM_JOB_ID=1234");
  setenv("EMBER_RENDEZVOUS_JOB", "run-7", 1);  // ours first
  EXPECT_EQ(dist::rendezvous_job_token(), "EMBER_RENDEZVOUS_JOB=run-7");
  unsetenv("SLURM_JOB_ID");
  unsetenv("EMBER_RENDEZVOUS_JOB");
}

}  // namespace
