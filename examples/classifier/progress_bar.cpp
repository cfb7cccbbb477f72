#include "progress_bar.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace ember::examples {

std::string format_duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) / 60 % 60);
  return buf;
}

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), tty_(::isatty(2)) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::update(int64_t done, int64_t samples, const std::string& status) {
  done_ = done;
  samples_ = samples;
  if (!enabled_ || !tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done, samples, status, false);
}

void ProgressBar::finish(const std::string& status) {
  if (!enabled_) return;
  draw(done_, samples_, status, true);
}

void ProgressBar::draw(int64_t done, int64_t samples, const std::string& status, bool final) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double frac = total_ > 0 ? double(done) / double(total_) : 1.0;
  const int width = 24;
  int filled = int(frac * width + 0.5);
  std::string bar(size_t(filled), '#');
  bar.append(size_t(width - filled), '.');
  double rate = elapsed > 0 ? double(samples) / elapsed : 0.0;
  double eta = done > 0 ? elapsed * double(total_ - done) / double(done) : NAN;
  std::fprintf(stderr, "%s%s [%s] %lld/%lld %s | %.0f samples/s | %s %s%s", tty_ ? "\r\033[K" : "", label_.c_str(),
               bar.c_str(), (long long)done, (long long)total_, status.c_str(), rate, final ? "took" : "ETA",
               format_duration(final ? elapsed : eta).c_str(), final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace ember::examples
