// A one-line progress bar on stderr: redrawn in place (at most ~10 times a second) when stderr is
// a terminal; otherwise only the finished line is printed, so logs stay readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace ember::examples {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, bool enabled = true);
  // Advances to `done` of `total` with a status text (loss, accuracy, ...); `samples` is the
  // number of examples processed so far, for the rate.
  void update(int64_t done, int64_t samples, const std::string& status);
  void finish(const std::string& status);  // prints the final line and a newline

 private:
  void draw(int64_t done, int64_t samples, const std::string& status, bool final);
  std::string label_;
  int64_t total_;
  bool enabled_, tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int64_t done_ = 0, samples_ = 0;
};

std::string format_duration(double seconds);  // "1m05s", "12.3s"

}  // namespace ember::examples
