// Atomic writes leave "<path>.tmp.<pid>" when the writer is killed before its rename; the next
// write (or a program's start) removes those of processes that are gone, and only those.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "framework/train/io/safetensors.h"
#include "test_util.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {
// The pid of a child that has exited and been reaped: no process runs under it now.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}
}  // namespace

TEST(TempFiles, StaleTempFilesOfDeadWritersAreRemovedOnTheNextWrite) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("ember_tmpfiles_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "ckpt.safetensors").string();
  const std::string dead = path + ".tmp." + std::to_string(dead_pid());
  const std::string live = path + ".tmp." + std::to_string(::getppid());  // our parent still runs
  const std::string other = (dir / "other.safetensors.tmp.").string() + std::to_string(dead_pid());
  const std::string odd = path + ".tmp.notapid";
  for (const std::string& f : {dead, live, other, odd}) std::ofstream(f) << "partial";
  io::write_file_atomic(path, {1, 2, 3});
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));   // its writer may still rename it
  EXPECT_TRUE(fs::exists(other));  // another file's temporaries are not ours to judge
  EXPECT_TRUE(fs::exists(odd));
  EXPECT_EQ(fs::file_size(path), 3u);
  EXPECT_EQ(io::remove_stale_temp_files((dir / "other.safetensors").string()), 1);
  EXPECT_FALSE(fs::exists(other));
  EXPECT_EQ(io::remove_stale_temp_files(path), 0);
  fs::remove_all(dir);
}
