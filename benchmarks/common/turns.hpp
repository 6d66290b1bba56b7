#pragma once
// Several programs timed in turns, for ratios between libraries that see the same moments of a
// noisy machine.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace bench {

/// Medians (seconds) of several functions timed in turns: each round runs `runs[i]` timed runs
/// of each fs[i]. Before its turn each function rests the machine and runs once untimed:
/// OpenBLAS's threads spin for about 0.1 s after a call, TBB's briefly, and a pool still spinning
/// would slow the next library down.
inline std::vector<double> medians_in_turns(const std::vector<std::function<void()>>& fs, const std::vector<int>& runs,
                                            int rounds) {
  std::vector<std::vector<double>> times(fs.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < fs.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      fs[i]();
      for (int k = 0; k < runs[i]; ++k) {
        auto start = std::chrono::steady_clock::now();
        fs[i]();
        times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
  std::vector<double> medians;
  for (auto& t : times) {
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

}  // namespace bench
