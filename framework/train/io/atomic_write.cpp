#include "framework/train/io/atomic_write.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"

namespace ember::io {
namespace fs = std::filesystem;

namespace {

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// Owns the temporary file until it is renamed: closes and removes it on every error path.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    static std::atomic<uint64_t> counter{0};
    for (int tries = 0; fd_ < 0; ++tries) {
      path_ = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      EMBER_CHECK(fd_ >= 0 || (errno == EEXIST && tries < 1000), "cannot create '", path_, "': ", std::strerror(errno));
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  void write(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      EMBER_CHECK(n > 0, "writing '", path_, "' failed: ", n < 0 ? std::strerror(errno) : "no progress");
      p += n;
      size -= size_t(n);
    }
  }

  // fsync, close, and rename over `target`; afterwards the file is no longer ours to remove.
  void commit(const std::string& target) {
    EMBER_CHECK(::fsync(fd_) == 0, "syncing '", path_, "' failed: ", std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    EMBER_CHECK(::close(fd) == 0, "closing '", path_, "' failed: ", std::strerror(errno));
    EMBER_CHECK(::rename(path_.c_str(), target.c_str()) == 0, "cannot rename '", path_, "' to '", target, "': ",
                std::strerror(errno));
    path_.clear();
  }

  void copy_mode_of(const struct stat& st) { ::fchmod(fd_, st.st_mode & 07777); }

 private:
  std::string path_;
  int fd_ = -1;
};

void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the file itself is durable; a folder we may not open cannot be synced
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string resolve_write_target(const std::string& path) {
  EMBER_CHECK(!path.empty(), "cannot write a file with an empty path");
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    EMBER_CHECK(hops < 40, "cannot write '", path, "': more than 40 symlinks to follow");
    std::error_code ec;
    const fs::path link = fs::read_symlink(p, ec);
    EMBER_CHECK(!ec, "cannot read the symlink '", p.string(), "': ", ec.message());
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
}

void write_file_atomic_streamed(const std::string& path, const std::function<void(const ByteSink&)>& produce) {
  const std::string target = resolve_write_target(path);
  struct stat st;
  const bool exists = ::stat(target.c_str(), &st) == 0;
  EMBER_CHECK(!exists || S_ISREG(st.st_mode), "cannot write '", path, "': ", target == path ? "it" : "its target '" + target + "'",
              " is ", file_kind(st.st_mode), ", not a regular file (Ember replaces only regular files)");
  remove_stale_temp_files(target);  // left by writers killed between create and rename
  TempFile tmp(target);
  if (exists) tmp.copy_mode_of(st);
  produce([&](const void* data, size_t size) { tmp.write(data, size); });
  tmp.commit(target);
  sync_folder(folder_of(target));
}

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic_streamed(path, [&](const ByteSink& sink) { sink(bytes.data(), bytes.size()); });
}

void write_text_atomic(const std::string& path, const std::string& text) {
  write_file_atomic_streamed(path, [&](const ByteSink& sink) { sink(text.data(), text.size()); });
}

int remove_stale_temp_files(const std::string& path) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  int removed = 0;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    // "<pid>" or "<pid>.<n>": the writer's pid, then its own counter.
    std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot != std::string::npos) {
      const std::string n = rest.substr(dot + 1);
      if (n.empty() || n.size() > 19 || n.find_first_not_of("0123456789") != std::string::npos) continue;
      rest = rest.substr(0, dot);
    }
    if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = pid_t(std::stol(rest));
    // Only a writer that is gone: a live one (or one we may not signal) may still be renaming it.
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

}  // namespace ember::io
