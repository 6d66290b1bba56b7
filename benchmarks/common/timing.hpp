#pragma once
// Timing for the benchmarks: medians of repeated runs after a warm-up, a thread limit for a
// section, and one printed row per measurement.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <utility>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include <lazytensor/core/cpu_capability.hpp>
#include <lazytensor/ops/kernel_levels.hpp>

namespace bench {

/// Every benchmark's log starts with the CPU and the kernels' capability level that ran.
inline const bool machine_named = [] {
  std::printf("machine: %s; kernels at level %s (built: %s)\n", lt::cpu_model_name().c_str(),
              std::string(lt::capability_name(lt::running_kernels().level)).c_str(), lt::compiled_levels().c_str());
  return true;
}();

/// Keeps the compiler from dropping a computation whose result is otherwise unused.
template <class T> void keep(const T& value) { asm volatile("" : : "r"(&value) : "memory"); }

/// The median wall time of `reps` runs of f, in seconds, after `warmups` untimed runs (which
/// also touch the memory f uses). The machine is shared and noisy: medians, not means.
template <class F>
double median_seconds(F&& f, int reps, int warmups = 1) {
  for (int w = 0; w < warmups; ++w) f();
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[static_cast<std::size_t>(reps / 2)];
}

/// The median CPU time of the whole process over `reps` runs of f, in seconds, after `warmups`
/// untimed runs: on a shared machine, the work a run did rather than the time it was given.
/// Only meaningful where nothing spins while waiting (1 thread).
template <class F>
double median_process_cpu_seconds(F&& f, int reps, int warmups = 1) {
  auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  for (int w = 0; w < warmups; ++w) f();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const double start = now();
    f();
    times.push_back(now() - start);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[static_cast<std::size_t>(reps / 2)];
}

/// Medians of f and g timed alternately, so that both see the same moments of a noisy
/// machine: the fair way to take a ratio.
template <class F, class G>
std::pair<double, double> median_seconds_paired(F&& f, G&& g, int reps) {
  f();
  g();
  std::vector<double> tf, tg;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    g();
    auto t2 = std::chrono::steady_clock::now();
    tf.push_back(std::chrono::duration<double>(t1 - t0).count());
    tg.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

/// Runs f with TBB limited to `threads` worker threads and returns what f returns.
template <class F>
decltype(auto) with_threads(int threads, F&& f) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  return f();
}

/// "  name   value unit   ratio r   [extra extra_unit]"
inline void print_row(const char* name, double value, const char* unit, double ratio, double extra = 0,
                      const char* extra_unit = nullptr) {
  std::printf("  %-24s %10.3f %-7s ratio %6.3f", name, value, unit, ratio);
  if (extra_unit != nullptr) std::printf("  %8.2f %s", extra, extra_unit);
  std::printf("\n");
}

}  // namespace bench
