// The one progress bar of the example programs: a line on stderr (or any stream), redrawn in
// place at most ~10 times a second when the stream is a terminal; on a file or pipe only the
// finished line is printed, so that logs stay readable and tables on stdout stay clean.
//
//   ProgressBar bar("epoch 1/3", steps);             // training: update(done, samples, "loss 0.42")
//   ProgressBar bar("cases", n, true, stderr, "cases"); // benchmarks: step("n=512 tiled")
#pragma once
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ember::examples {

inline std::string format_duration(double s) {  // "1m05s", "12.3s"
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) / 60 % 60);
  return buf;
}

class ProgressBar {
 public:
  // `unit` names what `samples` counts, for the rate ("samples/s", "cases/s").
  ProgressBar(std::string label, int64_t total, bool enabled = true, std::FILE* out = stderr,
              std::string unit = "samples")
      : label_(std::move(label)), unit_(std::move(unit)), total_(total), enabled_(enabled), out_(out),
        tty_(::isatty(::fileno(out))) {
    start_ = last_draw_ = std::chrono::steady_clock::now();
  }

  // Advances to `done` of `total` with a status text (loss, accuracy, ...); `samples` is the
  // number of units processed so far, for the rate.
  void update(int64_t done, int64_t samples, const std::string& status) {
    done_ = done;
    samples_ = samples;
    status_ = status;
    if (!enabled_ || !tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(status, false);
  }
  // A run resumed at `done` of `total`: the ETA counts only the work this run has done.
  void resume_from(int64_t done) { first_ = done_ = done; }
  // One more unit of work done, named by `what` (benchmarks: one case or variant).
  void step(const std::string& what) { update(done_ + 1, samples_ + 1, what); }
  // Prints the final line and a newline.
  void finish(const std::string& status) {
    if (!enabled_) return;
    draw(status, true);
  }
  void finish() { finish(status_); }

 private:
  void draw(const std::string& status, bool final) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double frac = total_ > 0 ? double(done_) / double(total_) : 1.0;
    const int width = 24;
    int filled = int(frac * width + 0.5);
    filled = filled < 0 ? 0 : filled > width ? width : filled;
    std::string bar(size_t(filled), '#');
    bar.append(size_t(width - filled), '.');
    double rate = elapsed > 0 ? double(samples_) / elapsed : 0.0;
    double eta = done_ > first_ ? elapsed * double(total_ - done_) / double(done_ - first_) : NAN;
    // Slow units (benchmark cases) keep two decimals, so that their rate does not read 0.
    std::fprintf(out_, "%s%s [%s] %lld/%lld %s | %.*f %s/s | %s %s%s", tty_ ? "\r\033[K" : "", label_.c_str(),
                 bar.c_str(), (long long)done_, (long long)total_, status.c_str(), rate < 10 ? 2 : 0, rate, unit_.c_str(),
                 final ? "took" : "ETA", format_duration(final ? elapsed : eta).c_str(), final ? "\n" : "");
    std::fflush(out_);
  }
  std::string label_, unit_, status_;
  int64_t total_;
  bool enabled_;
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int64_t first_ = 0, done_ = 0, samples_ = 0;
};

}  // namespace ember::examples
