#pragma once
// core/'s functions that a program compiles once: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own.
#include "lazytensor/core/metrics.hpp"

namespace lt::metrics {

std::string report() {
  detail::settle();
  auto& r = detail::registry();
  std::vector<std::pair<std::string, Timer*>> timers;
  std::vector<std::pair<std::string, std::int64_t>> counters;
  std::vector<std::pair<std::string, std::string>> infos;
  {
    std::lock_guard lock(r.mu);
    for (auto& [n, t] : r.timers) timers.emplace_back(n, t.get());
    for (auto& [n, c] : r.counters)
      if (c->value() != 0) counters.emplace_back(n, c->value());
    infos.assign(r.infos.begin(), r.infos.end());
  }
  std::string out;
  for (auto& [name, t] : timers) {
    auto s = t->summary();
    if (s.count == 0) continue;
    out += "Metric: " + name + "\n";
    out += "  TotalSamples: " + std::to_string(s.count) + "\n";
    out += "  Accumulator: " + detail::format_seconds(s.total) + "\n";
    out += "  Percentiles: ";
    const double ps[] = {1, 5, 10, 20, 50, 80, 90, 95, 99};
    for (std::size_t i = 0; i < std::size(ps); ++i) {
      char head[16];
      std::snprintf(head, sizeof head, "%g%%=", ps[i]);
      out += (i ? "; " : "") + std::string(head) + detail::format_seconds(s.percentile(ps[i]));
    }
    out += "\n";
  }
  for (auto& [name, v] : counters) out += "Counter: " + name + "\n  Value: " + std::to_string(v) + "\n";
  for (auto& [name, v] : infos) out += "Info: " + name + "\n  Value: " + v + "\n";
  return out;
}

}  // namespace lt::metrics
