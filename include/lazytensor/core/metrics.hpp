#pragma once
// Counters and timed metrics, readable by name and as a text report.
// Lives in core so that every layer can count without depending on the runtime.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lt::metrics {

/// A monotonically increasing count. Handles are stable for the life of the process.
class Counter {
 public:
  /// Adds `n` (relaxed: counts are exact, their order against other memory is not).
  void add(std::int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  /// The current count.
  std::int64_t value() const { return value_.load(std::memory_order_relaxed); }
  /// Sets the count to 0.
  void reset() { value_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

/// Timed samples in seconds; keeps the most recent `window` for percentiles.
class Timer {
 public:
  /// The number of most recent samples kept for percentiles.
  static constexpr std::size_t window = 1024;
  /// Adds one sample of `seconds`. Thread-safe.
  void record(double seconds) {
    std::lock_guard lock(mu_);
    if (samples_.size() < window) samples_.push_back(seconds);
    else samples_[count_ % window] = seconds;
    ++count_;
    total_ += seconds;
  }
  /// A timer's samples at one moment.
  struct Summary {
    /// Samples recorded since the last reset.
    std::int64_t count = 0;
    /// Seconds summed over them.
    double total = 0;
    /// The retained window of samples, ascending.
    std::vector<double> sorted;  // the retained window, ascending
    /// The `p`-th percentile (0 to 100) of the retained window; 0 when it is empty.
    double percentile(double p) const {
      if (sorted.empty()) return 0;
      auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
      return sorted[std::min(i, sorted.size() - 1)];
    }
  };
  /// A copy of the samples, sorted. Thread-safe.
  Summary summary() const {
    std::lock_guard lock(mu_);
    Summary s{count_, total_, samples_};
    std::sort(s.sorted.begin(), s.sorted.end());
    return s;
  }
  /// Seconds summed over every sample, without waiting for running steps.
  double total() const {
    std::lock_guard lock(mu_);
    return total_;
  }
  /// Drops every sample. Thread-safe.
  void reset() {
    std::lock_guard lock(mu_);
    samples_.clear();
    count_ = 0;
    total_ = 0;
  }

 private:
  mutable std::mutex mu_;
  std::vector<double> samples_;
  std::int64_t count_ = 0;
  double total_ = 0;
};

namespace detail {
/// Set by the runtime once steps may run in the background: waits for the queued steps, so
/// that a read (counter, timer, report, reset) takes in every step issued before it.
inline std::atomic<void (*)()> before_read{nullptr};
inline void settle() {
  if (void (*wait)() = before_read.load(std::memory_order_acquire)) wait();
}

struct Registry {
  std::mutex mu;
  // std::map keeps node addresses stable and the report sorted by name.
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters;
  std::map<std::string, std::unique_ptr<Timer>, std::less<>> timers;
  std::map<std::string, std::string, std::less<>> infos;
};
inline Registry& registry() {
  static Registry r;
  return r;
}
template <class T, class Map>
T& find_or_make(Map& map, std::string_view name) {
  std::lock_guard lock(registry().mu);
  auto it = map.find(name);
  if (it == map.end()) it = map.emplace(std::string(name), std::make_unique<T>()).first;
  return *it->second;
}
}  // namespace detail

/// The counter named `name`, created at zero on first use. Keep the reference: look-up locks.
inline Counter& counter_handle(std::string_view name) {
  return detail::find_or_make<Counter>(detail::registry().counters, name);
}
inline Timer& timer_handle(std::string_view name) {
  return detail::find_or_make<Timer>(detail::registry().timers, name);
}

/// Current value of a counter (0 if it never counted).
inline std::int64_t counter(std::string_view name) {
  detail::settle();
  auto& r = detail::registry();
  std::lock_guard lock(r.mu);
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second->value();
}

/// Names of the counters that have counted something.
inline std::vector<std::string> counter_names() {
  detail::settle();
  auto& r = detail::registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (auto& [n, c] : r.counters)
    if (c->value() != 0) names.push_back(n);
  return names;
}

/// Records a fact about the build or the run (which GEMM library, ...) for the report.
/// Facts are not counts: reset() keeps them.
inline void set_info(std::string_view name, std::string value) {
  auto& r = detail::registry();
  std::lock_guard lock(r.mu);
  r.infos.insert_or_assign(std::string(name), std::move(value));
}

/// The fact recorded under `name`, or "" when none was.
inline std::string info(std::string_view name) {
  auto& r = detail::registry();
  std::lock_guard lock(r.mu);
  auto it = r.infos.find(name);
  return it == r.infos.end() ? std::string() : it->second;
}

/// Samples recorded for a timed metric.
inline Timer::Summary timer(std::string_view name) {
  detail::settle();
  return timer_handle(name).summary();
}

/// Sets every counter and timed metric back to zero.
inline void reset() {
  detail::settle();
  auto& r = detail::registry();
  std::lock_guard lock(r.mu);
  for (auto& [n, c] : r.counters) c->reset();
  for (auto& [n, t] : r.timers) t->reset();
}

/// Times a scope into a Timer.
class ScopedTimer {
 public:
  /// Starts timing; the destructor records the elapsed seconds into `t`.
  explicit ScopedTimer(Timer& t) : t_(t), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    t_.record(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Timer& t_;
  std::chrono::steady_clock::time_point start_;
};

namespace detail {
inline std::string format_seconds(double s) {
  char buf[64];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3fs", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3fms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3fus", s * 1e6);
  return buf;
}
}  // namespace detail

/// Text report of every timed metric with samples, every non-zero counter and every fact.
std::string report();

namespace detail {
/// Writes the report to $LT_METRICS_FILE when the program ends.
struct ReportAtExit {
  ReportAtExit() { registry(); }  // made first, so the registry outlives this object
  ~ReportAtExit() {
    const char* path = std::getenv("LT_METRICS_FILE");
    if (path == nullptr || *path == 0) return;
    if (std::FILE* f = std::fopen(path, "w")) {
      std::string r = report();
      std::fwrite(r.data(), 1, r.size(), f);
      std::fclose(f);
    }
  }
};
inline ReportAtExit report_at_exit;
}  // namespace detail

}  // namespace lt::metrics
