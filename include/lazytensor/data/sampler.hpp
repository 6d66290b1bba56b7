#pragma once
// The order in which a loader visits a dataset, epoch by epoch.
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "lazytensor/data/seeded_random.hpp"

namespace lt::data {

/// The indices 0..n-1 in the order epoch `epoch` reads them: as they are, or, with `shuffle`,
/// a permutation that depends on (seed, epoch) alone, so a run is repeatable and every epoch
/// sees a fresh order.
inline std::vector<std::int64_t> epoch_order(std::int64_t n, bool shuffle, std::uint64_t seed, std::uint64_t epoch) {
  LT_CHECK(n >= 0, "epoch_order: negative dataset size ", n);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (!shuffle) return order;
  SeededRandom random(seed, epoch);
  for (std::size_t i = order.size(); i > 1; --i) {  // Fisher-Yates
    std::size_t j = static_cast<std::size_t>(random.below(i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace lt::data
