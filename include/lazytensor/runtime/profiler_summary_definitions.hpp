#pragma once
// lt::profiler::summary(), defined: the kernel table of a recording. Included once per program,
// by the implementation (lazytensor/implementation.hpp), after runtime/profiler_definitions.hpp.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lazytensor/core/cpu_capability.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/runtime/profiler_definitions.hpp"

namespace lt::profiler::detail {

struct KernelRow {
  std::string name;
  std::int64_t calls = 0;
  double seconds = 0, bytes = 0, flops = 0;
  bool flops_known = true;
};

/// The events of the recording under way (a copy), else of the last one stopped, and its limit.
inline std::pair<std::vector<Event>, Limit> latest_events() {
  Logs& l = logs();
  std::lock_guard lock(l.mu);
  if (!on()) return {l.last, l.last_limit};
  std::vector<Event> all;
  for (const auto& t : l.threads) {
    std::lock_guard tl(t->mu);
    all.insert(all.end(), t->events.begin(), t->events.end());
  }
  return {std::move(all), current_limit()};
}

/// One row per kernel name (a fused group's name lists its ops and their count), slowest in
/// total first.
inline std::vector<KernelRow> kernel_rows(const std::vector<Event>& events) {
  std::map<std::string, KernelRow> rows;
  for (const Event& e : events) {
    if (e.phase != 'X') continue;
    const std::string_view category = category_of(e.span);
    if (category != "kernel" && category != "collective") continue;
    KernelRow& r = rows[name_of(e.span)];
    r.name = name_of(e.span);
    ++r.calls;
    r.seconds += static_cast<double>(e.span.end_ns - e.span.start_ns) * 1e-9;
    bool counted_flops = false;
    for (const Arg& a : args_of(e.span)) {
      if (a.key == "bytes") r.bytes += a.number;
      if (a.key == "flops") r.flops += a.number, counted_flops = true;
    }
    r.flops_known = r.flops_known && counted_flops;
  }
  std::vector<KernelRow> sorted;
  for (auto& [name, r] : rows) sorted.push_back(std::move(r));
  std::stable_sort(sorted.begin(), sorted.end(), [](const KernelRow& a, const KernelRow& b) { return a.seconds > b.seconds; });
  return sorted;
}

}  // namespace lt::profiler::detail

namespace lt::profiler {

std::string summary(std::size_t top) {
  const auto [events, limit] = detail::latest_events();
  const std::vector<detail::KernelRow> rows = detail::kernel_rows(events);
  double total = 0;
  for (const auto& r : rows) total += r.seconds;
  std::string out = "Kernels by total time (" + std::to_string(rows.size()) + " kinds, " +
                    lt::metrics::detail::format_seconds(total) + " in all; kernels at level " +
                    std::string(capability_name(running_kernels().level)) + ", CPU " + cpu_model_name() + ")\n";
  if (limit.dropped > 0)
    out += "Partial: the recording kept its first " + std::to_string(limit.max_events) + " events and dropped " +
           std::to_string(limit.dropped) + " (LT_PROFILE_MAX_EVENTS); the table counts the kept ones\n";
  char line[256];
  std::snprintf(line, sizeof line, "%10s %6s %8s %10s %10s %9s  %s\n", "total", "share", "calls", "mean", "GB/s",
                "GFLOP/s", "kernel");
  out += line;
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    const detail::KernelRow& r = rows[k];
    const double mean = r.seconds / static_cast<double>(r.calls);
    char gflops[32] = "-";
    if (r.flops_known && r.seconds > 0) std::snprintf(gflops, sizeof gflops, "%.2f", r.flops / r.seconds * 1e-9);
    std::snprintf(line, sizeof line, "%10s %5.1f%% %8lld %10s %10.2f %9s  %s\n",
                  lt::metrics::detail::format_seconds(r.seconds).c_str(), total > 0 ? 100 * r.seconds / total : 0.0,
                  static_cast<long long>(r.calls), lt::metrics::detail::format_seconds(mean).c_str(),
                  r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0.0, gflops, r.name.c_str());
    out += line;
  }
  if (rows.size() > top) out += "(" + std::to_string(rows.size() - top) + " more)\n";
  return out;
}

}  // namespace lt::profiler
