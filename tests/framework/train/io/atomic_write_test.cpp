// write_file_atomic (framework/train/io/atomic_write.h), through save_npy and save_safetensors:
// a full disk, concurrent writers under a reader, symlinks, non-regular targets, no temp files left.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "framework/train/io/atomic_write.h"
#include "framework/train/io/npy.h"
#include "framework/train/io/npy_header.h"
#include "framework/train/io/safetensors.h"
#include "test_util.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Files in dir whose name holds ".tmp.": what a writer left behind.
int temp_files_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
}  // namespace

// RLIMIT_FSIZE stands in for a full disk: the write fails part-way (EFBIG), the old file must
// survive intact and the temporary file must be gone. In a child, so the limit stays there.
TEST(AtomicWrite, FullDiskKeepsTheOldFileAndRemovesTheTemp) {
  const fs::path dir = fresh_dir("ember_atomic_full");
  const std::string path = (dir / "x.npy").string();
  save_npy(path, full({4}, 2.5));
  const std::string before = read_all(path);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the writer instead of failing the write
    struct rlimit lim = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    int code = 1;
    try {
      save_npy(path, full({100000}, 1.0));  // 400 KB against a 4 KB limit
    } catch (const Error& e) {
      code = std::string(e.what()).find("File too large") != std::string::npos ? 0 : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the writer died instead of raising";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error raised, 2: an error without the reason";
  EXPECT_EQ(read_all(path), before);
  EXPECT_EQ(temp_files_in(dir), 0);
  fs::remove_all(dir);
}

// Two writers replace one file again and again while a reader loads it: every load sees one
// writer's complete file, never a torn or half-written one.
TEST(AtomicWrite, ConcurrentWritersNeverShowAReaderATornFile) {
  const fs::path dir = fresh_dir("ember_atomic_race");
  const std::string path = (dir / "x.npy").string();
  const Tensor a = full({64, 64}, 1.0), b = full({64, 64}, 2.0);
  save_npy(path, a);
  std::atomic<bool> stop{false};
  std::atomic<int> writer_errors{0};
  auto writer = [&](const Tensor& t) {
    for (int i = 0; i < 150 && !stop; ++i) {
      try {
        save_npy(path, t);
      } catch (const Error&) {
        ++writer_errors;
      }
    }
  };
  std::thread w1(writer, a), w2(writer, b);
  int loads = 0, torn = 0;
  std::string first_error;
  for (; loads < 300; ++loads) {
    try {
      const Tensor t = load_npy(path);
      const double s = t.sum().item();
      if (s != 4096.0 && s != 8192.0) ++torn;
    } catch (const Error& e) {
      if (torn++ == 0) first_error = e.what();
    }
  }
  stop = true;
  w1.join();
  w2.join();
  EXPECT_EQ(torn, 0) << first_error;
  EXPECT_EQ(writer_errors.load(), 0);
  EXPECT_EQ(temp_files_in(dir), 0);
  fs::remove_all(dir);
}

TEST(AtomicWrite, SymlinksAreFollowedAndStayLinks) {
  const fs::path dir = fresh_dir("ember_atomic_link");
  const fs::path target = dir / "real.npy", link = dir / "link.npy", link2 = dir / "link2.npy";
  save_npy(target.string(), full({3}, 1.0));
  fs::create_symlink("real.npy", link);   // relative, resolved against the link's folder
  fs::create_symlink(link, link2);        // a chain
  save_npy(link2.string(), full({5}, 7.0));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_symlink(link2));
  EXPECT_EQ(load_npy(target.string()).sum().item(), 35.0);
  io::save_safetensors(link.string(), {{"w", full({2}, 3.0)}});
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(io::load_safetensors(target.string()).tensors.at(0).second.sum().item(), 6.0);
  EXPECT_EQ(temp_files_in(dir), 0);
  fs::remove_all(dir);
}

// A FIFO and a folder stand for every non-regular target (a device such as /dev/full is one more
// kind; the test does not write near real devices). They are refused and stay what they were.
TEST(AtomicWrite, NonRegularTargetsAreRefusedAndLeftAlone) {
  const fs::path dir = fresh_dir("ember_atomic_fifo");
  const fs::path fifo = dir / "pipe.npy", folder = dir / "folder.npy", link = dir / "to_pipe.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(folder);
  fs::create_symlink(fifo, link);
  EXPECT_EMBER_ERROR(save_npy(fifo.string(), full({2}, 1.0)), "is a FIFO, not a regular file");
  EXPECT_EMBER_ERROR(io::save_safetensors(fifo.string(), {{"w", full({2}, 1.0)}}), "is a FIFO");
  EXPECT_EMBER_ERROR(save_npy(link.string(), full({2}, 1.0)), "its target '" + fifo.string() + "' is a FIFO");
  EXPECT_EMBER_ERROR(io::write_text_atomic(folder.string(), "x"), "is a folder");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(temp_files_in(dir), 0);
  fs::remove_all(dir);
}

TEST(AtomicWrite, ErrorsWhileProducingTheBytesRemoveTheTemp) {
  const fs::path dir = fresh_dir("ember_atomic_throw");
  const std::string path = (dir / "x.bin").string();
  io::write_text_atomic(path, "old");
  EXPECT_THROW(io::write_file_atomic_streamed(path, [](const io::ByteSink& sink) {
                 sink("new", 3);
                 throw Error("producer failed");
               }),
               Error);
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(temp_files_in(dir), 0);
  fs::remove_all(dir);
}

// With 64 dimensions a header stays far below 65,535 bytes; longer ones switch to version 2.0's
// 4-byte length instead of truncating it.
TEST(AtomicWrite, NpyHeadersLongerThanTwoBytesCanCountUseVersionTwo) {
  const std::string small = npy::file_header(DType::Float32, Shape(64, 1));
  EXPECT_EQ(small[6], 1);
  EXPECT_EQ(small.size() % 64, 0u);
  const std::string big = npy::file_header(DType::Float32, Shape(40000, 1));
  ASSERT_EQ(big[6], 2);
  EXPECT_EQ(big.size() % 64, 0u);
  const npy::Preamble p = npy::parse_preamble(big, "big");
  EXPECT_EQ(p.header_offset, 12u);
  EXPECT_EQ(p.header_offset + p.header_bytes, big.size());
  EXPECT_EMBER_ERROR(npy::parse_header(big.substr(12), "big"), "40000 dimensions is too many");
}
