#pragma once
// Where a training loop stands in its data: checkpoints save it, DataLoader::set_position
// resumes from it.
#include <cstdint>

namespace lt::data {

/// The epoch a loop is in (as DataLoader counts them, from 0) and the batches of it already
/// consumed. A loop that has finished epoch e stands at {e + 1, 0}.
struct LoaderPosition {
  /// The epoch, counted from 0.
  std::uint64_t epoch = 0;
  /// Batches of that epoch already consumed.
  std::int64_t batch = 0;
  /// Equal when epoch and batch are.
  friend bool operator==(const LoaderPosition&, const LoaderPosition&) = default;
};

}  // namespace lt::data
