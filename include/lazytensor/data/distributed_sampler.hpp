#pragma once
// DistributedSampler: each replica's share of a dataset, disjoint from the other replicas',
// as PyTorch's torch.utils.data.DistributedSampler shares it.
#include <cstdint>
#include <vector>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/replica.hpp"
#include "lazytensor/data/sampler.hpp"

namespace lt::data {

/// Options of DistributedSampler, as PyTorch's keyword arguments.
struct DistributedSamplerOptions {
  /// The number of replicas sharing the dataset; -1: lt::world_size().
  int num_replicas = -1;  // -1: lt::world_size()
  /// This replica's share, in [0, num_replicas); -1: lt::ordinal().
  int rank = -1;          // -1: lt::ordinal()
  /// Shuffle each epoch's order by (seed, epoch), the same order on every replica.
  bool shuffle = true;
  /// The shuffling seed; give every replica the same one.
  std::uint64_t seed = 0;
  /// Leave out the last examples so that every replica gets the same number; otherwise the
  /// order is padded with its first examples up to a multiple of num_replicas.
  bool drop_last = false;
};

/// The indices replica `rank` reads in an epoch: the epoch's order (shuffled by (seed, epoch)
/// when asked, the same on every replica), padded or cut to a multiple of num_replicas, then
/// every num_replicas-th index from `rank` on.
///
///   lt::data::DistributedSampler sampler(dataset.size(), {.seed = 1});
///   lt::data::DataLoader loader(dataset, {.batch_size = 32, .sampler = sampler});
class DistributedSampler {
 public:
  /// A sampler over a dataset of `size` examples; raises lt::Error for a negative size, num_replicas below 1
  /// or a rank outside [0, num_replicas).
  explicit DistributedSampler(std::int64_t size, DistributedSamplerOptions options = {})
      : size_(size), options_(options) {
    if (options_.num_replicas < 0) options_.num_replicas = world_size();
    if (options_.rank < 0) options_.rank = ordinal();
    LT_CHECK(size_ >= 0, "DistributedSampler: negative dataset size ", size_);
    LT_CHECK(options_.num_replicas >= 1, "DistributedSampler: num_replicas must be at least 1, got ", options_.num_replicas);
    LT_CHECK(options_.rank < options_.num_replicas, "DistributedSampler: rank ", options_.rank,
             " is not in [0, ", options_.num_replicas, ")");
  }

  /// Indices per replica and epoch.
  std::int64_t size() const {
    const std::int64_t r = options_.num_replicas;
    return options_.drop_last ? size_ / r : (size_ + r - 1) / r;
  }
  /// Sets the epoch that indices() reads.
  void set_epoch(std::uint64_t epoch) { epoch_ = epoch; }
  /// The epoch that indices() reads.
  std::uint64_t epoch() const { return epoch_; }
  /// The options, with num_replicas and rank resolved.
  const DistributedSamplerOptions& options() const { return options_; }

  /// This replica's indices for the epoch set by set_epoch().
  std::vector<std::int64_t> indices() const { return indices(epoch_); }
  /// This replica's indices for `epoch`.
  std::vector<std::int64_t> indices(std::uint64_t epoch) const {
    std::vector<std::int64_t> order = epoch_order(size_, options_.shuffle, options_.seed, epoch);
    const std::int64_t total = size() * options_.num_replicas;
    for (std::size_t k = 0; static_cast<std::int64_t>(order.size()) < total; ++k) order.push_back(order[k]);
    std::vector<std::int64_t> mine;
    mine.reserve(static_cast<std::size_t>(size()));
    for (std::int64_t k = options_.rank; k < total; k += options_.num_replicas) mine.push_back(order[static_cast<std::size_t>(k)]);
    return mine;
  }
  /// As a DataLoader's sampler: the loader passes its dataset's size and its epoch.
  std::vector<std::int64_t> operator()(std::int64_t dataset_size, std::uint64_t epoch) const {
    LT_CHECK(dataset_size == size_, "DistributedSampler: made for ", size_, " examples, the loader's dataset has ",
             dataset_size);
    return indices(epoch);
  }

 private:
  std::int64_t size_;
  DistributedSamplerOptions options_;
  std::uint64_t epoch_ = 0;
};

}  // namespace lt::data
