#include "framework/train/dist/file_rendezvous.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "framework/train/dist/poll.h"
#include "framework/train/io/atomic_write.h"

namespace ember::dist {

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'R', 'D', 'V', 'Z', '1'};
constexpr uint32_t kVersion = 1;
// magic, then version, world, job length, writer length, payload length (uint32 each).
constexpr size_t kHeader = sizeof kMagic + 5 * sizeof(uint32_t);
constexpr size_t kChecksum = sizeof(uint64_t);

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Who wrote the file, for the message about a stale one.
std::string writer_description() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  return str("pid ", getpid(), " on ", host, " at unix time ", long(std::time(nullptr)));
}

std::string errno_text(int e) { return std::strerror(e); }

// Reads the whole file into `out`; false, with `why` saying why, when it cannot.
bool read_whole(const std::string& path, std::vector<uint8_t>& out, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ENOENT ? "no such file yet" : "cannot open it: " + errno_text(errno);
    return false;
  }
  out.clear();
  uint8_t buf[4096];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      why = "cannot read it: " + errno_text(errno);
      ::close(fd);
      return false;
    }
    if (got == 0) break;
    out.insert(out.end(), buf, buf + got);
    // A rendezvous file is small; anything this large is not one (and must not fill memory).
    if (out.size() > (1u << 20)) {
      why = "it is larger than 1 MiB, not a rendezvous file";
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  return true;
}

}  // namespace

std::string rendezvous_job_token() {
  for (const char* v : {"EMBER_RENDEZVOUS_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PBS_JOBID", "LSB_JOBID",
                        "FLUX_JOB_ID"})
    if (const char* e = std::getenv(v); e && *e) return str(v, "=", e);
  return "";
}

void publish_rendezvous(const std::string& path, const std::string& job, int world, const std::vector<uint8_t>& payload) {
  EMBER_CHECK(!path.empty(), "dist rendezvous: the file path is empty (expected ", kRendezvousFileVariable, "=<path>)");
  EMBER_CHECK(world >= 1, "dist rendezvous: world size ", world, ", expected at least 1");
  const std::string writer = writer_description();
  std::vector<uint8_t> file(kMagic, kMagic + sizeof kMagic);
  put_u32(file, kVersion);
  put_u32(file, uint32_t(world));
  put_u32(file, uint32_t(job.size()));
  put_u32(file, uint32_t(writer.size()));
  put_u32(file, uint32_t(payload.size()));
  file.insert(file.end(), job.begin(), job.end());
  file.insert(file.end(), writer.begin(), writer.end());
  file.insert(file.end(), payload.begin(), payload.end());
  const uint64_t sum = fnv1a(file.data(), file.size());
  file.resize(file.size() + kChecksum);
  std::memcpy(file.data() + file.size() - kChecksum, &sum, kChecksum);

  // Readers see the old file or the whole new one, never a part: write_file_atomic renames.
  try {
    io::write_file_atomic(path, file);
  } catch (const Error& e) {
    throw Error(str("dist rendezvous: ", e.what(), " (beside ", kRendezvousFileVariable, "=", path,
                    "; expected a folder that every rank can write and read)"));
  }
}

std::string parse_rendezvous(const std::vector<uint8_t>& file, const std::string& job, int world, size_t size,
                             std::vector<uint8_t>* payload) {
  if (file.size() < kHeader + kChecksum)
    return str("it is truncated (", file.size(), " bytes, shorter than the ", kHeader + kChecksum, "-byte header)");
  if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return "it is not a rendezvous file (wrong magic bytes)";
  const uint8_t* h = file.data() + sizeof kMagic;
  const uint32_t version = get_u32(h), file_world = get_u32(h + 4), job_len = get_u32(h + 8),
                 writer_len = get_u32(h + 12), payload_len = get_u32(h + 16);
  if (version != kVersion) return str("it has format version ", version, ", expected ", kVersion);
  const uint64_t body = uint64_t(kHeader) + job_len + writer_len + payload_len;
  if (uint64_t(file.size()) != body + kChecksum)
    return str("it is ", file.size() < body + kChecksum ? "truncated" : "longer than its header says", " (",
               file.size(), " bytes, expected ", body + kChecksum, ")");
  uint64_t sum;
  std::memcpy(&sum, file.data() + body, kChecksum);
  if (sum != fnv1a(file.data(), size_t(body))) return "it is corrupted (the checksum does not match)";
  const char* text = reinterpret_cast<const char*>(file.data() + kHeader);
  const std::string file_job(text, job_len), writer(text + job_len, writer_len);
  if (file_job != job || int64_t(file_world) != world)
    return str("it was written for another job (", file_job.empty() ? "no job token" : file_job, ", world size ",
               file_world, ", by ", writer, "; this job: ", job.empty() ? "no job token" : job, ", world size ", world,
               "): a stale file from an earlier run? Remove it, or give each job its own ", kRendezvousFileVariable);
  if (payload_len != size) return str("its payload is ", payload_len, " bytes, expected ", size);
  if (payload) payload->assign(file.begin() + int64_t(body) - payload_len, file.begin() + int64_t(body));
  return "";
}

std::vector<uint8_t> await_rendezvous(const std::string& path, const std::string& job, int world, int rank,
                                      size_t size, double timeout_s) {
  EMBER_CHECK(!path.empty(), "dist rendezvous: the file path is empty (expected ", kRendezvousFileVariable, "=<path>)");
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> file, payload;
  std::string why;
  const bool ok = poll_until(
      [&] {
        if (!read_whole(path, file, why)) return false;
        why = parse_rendezvous(file, job, world, size, &payload);
        return why.empty();
      },
      timeout_s, 10e-3);
  if (!ok) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    throw Error(str("dist rendezvous: rank ", rank, " of ", world, " waited ", waited, " s for rank 0's file ", path,
                    " (", kRendezvousFileVariable, "): ", why, " (is rank 0 running, with the same ",
                    kRendezvousFileVariable, " and WORLD_SIZE? EMBER_DIST_TIMEOUT_S sets how long to wait)"));
  }
  return payload;
}

void remove_rendezvous(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw Error(str("dist rendezvous: cannot remove ", path, ": ", errno_text(errno)));
}

ShareBytes share_through_file(const std::string& path, const std::string& job, int rank, int world, double timeout_s) {
  return [=](void* bytes, size_t n) {
    uint8_t* p = static_cast<uint8_t*>(bytes);
    if (rank == 0) {
      publish_rendezvous(path, job, world, std::vector<uint8_t>(p, p + n));
    } else {
      const std::vector<uint8_t> got = await_rendezvous(path, job, world, rank, n, timeout_s);
      std::memcpy(p, got.data(), n);
    }
  };
}

}  // namespace ember::dist
