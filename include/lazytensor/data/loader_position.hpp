#pragma once
// Where a training loop stands in its data: checkpoints save it, DataLoader::set_position
// resumes from it.
#include <cstdint>

namespace lt::data {

/// The epoch a loop is in (as DataLoader counts them, from 0) and the batches of it already
/// consumed. A loop that has finished epoch e stands at {e + 1, 0}.
struct LoaderPosition {
  std::uint64_t epoch = 0;
  std::int64_t batch = 0;
  friend bool operator==(const LoaderPosition&, const LoaderPosition&) = default;
};

}  // namespace lt::data
