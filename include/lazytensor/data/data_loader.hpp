#pragma once
// DataLoader: batches of a dataset, shuffled per epoch if asked, prepared ahead on a worker
// thread while the consumer works on the current one.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "lazytensor/data/dataset.hpp"
#include "lazytensor/data/prefetcher.hpp"
#include "lazytensor/data/loader_position.hpp"
#include "lazytensor/data/sampler.hpp"

namespace lt::data {

/// Options of DataLoader, as PyTorch's keyword arguments.
struct DataLoaderOptions {
  /// Examples stacked into each batch.
  std::int64_t batch_size = 1;
  /// Read each epoch in a seeded random order rather than in order.
  bool shuffle = false;
  /// The shuffling seed. It belongs to the loader: lt::manual_seed neither sets nor reads it.
  std::uint64_t seed = 0;
  /// Leave out the last batch when it would be short.
  bool drop_last = false;
  /// Batches the worker thread keeps ready ahead of the consumer.
  std::int64_t prefetch = 2;
  /// When set, the indices an epoch reads, given the dataset's size and the epoch (e.g. a
  /// DistributedSampler); `shuffle` and `seed` are then the sampler's business.
  std::function<std::vector<std::int64_t>(std::int64_t size, std::uint64_t epoch)> sampler;
};

/// Batches of `dataset`, each field stacked into a cpu tensor [batch, ...]. Every begin()
/// starts the next epoch (epoch() counts them; set_epoch() resumes elsewhere); with `shuffle`
/// epoch e reads the examples in the order epoch_order(size, true, seed, e).
///
///   lt::data::DataLoader loader(dataset, {.batch_size = 64, .shuffle = true, .seed = 1});
///   for (auto [images, labels] : loader) { ... }
///
/// A worker thread reads and stacks the next batches while the loop body runs. Leaving the
/// loop early (break, an exception) or dropping the iterator stops the worker; an exception
/// thrown while preparing a batch is rethrown by the iterator on the consumer's thread when it
/// reaches that batch. The iterator keeps the dataset alive, so it may outlive the loader.
template <Dataset D>
class DataLoader {
 public:
  /// A batch: the dataset's example type, each field stacked into [batch, ...].
  using batch_type = example_t<D>;

  /// Takes `dataset` by value and shares it with its iterators; raises lt::Error for batch_size or prefetch
  /// below 1.
  explicit DataLoader(D dataset, DataLoaderOptions options = {})
      : dataset_(std::make_shared<const D>(std::move(dataset))), options_(options) {
    LT_CHECK(options_.batch_size >= 1, "DataLoader: batch_size must be at least 1, got ", options_.batch_size);
    LT_CHECK(options_.prefetch >= 1, "DataLoader: prefetch must be at least 1, got ", options_.prefetch);
  }

  /// Batches per epoch.
  std::int64_t size() const { return batches(read_per_epoch()); }
  /// Batches of an epoch that reads `n` examples.
  std::int64_t batches(std::int64_t n) const {
    const std::int64_t b = options_.batch_size;
    return options_.drop_last ? n / b : (n + b - 1) / b;
  }
  /// The dataset it reads.
  const D& dataset() const { return *dataset_; }
  /// The options it was made with.
  const DataLoaderOptions& options() const { return options_; }
  /// The epoch the next begin() starts.
  std::uint64_t epoch() const { return epoch_; }
  /// Sets the epoch the next begin() starts (its shuffled order), e.g. to replay one.
  void set_epoch(std::uint64_t epoch) { epoch_ = epoch; }
  /// Resumes at `position`: the next begin() starts epoch position.epoch at its batch
  /// position.batch, reading none of the batches before it; later epochs start at their first.
  void set_position(LoaderPosition position) {
    LT_CHECK(position.batch >= 0, "DataLoader: a position's batch must not be negative, got ", position.batch);
    epoch_ = position.epoch;
    first_batch_ = position.batch;
  }

  /// An input iterator over one epoch's batches; it owns the worker thread of that epoch.
  class iterator {
   public:
    /// The batch type.
    using value_type = batch_type;
    /// Required of an input iterator; unused.
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    /// The current batch.
    const batch_type& operator*() const { return *current_; }
    /// The current batch's fields.
    const batch_type* operator->() const { return &*current_; }
    /// Waits for the next batch; rethrows an exception raised while preparing it.
    iterator& operator++() {
      current_ = prefetcher_->next();
      if (!current_) prefetcher_.reset();  // the epoch is over: let its thread go now
      return *this;
    }
    /// Advances, as operator++().
    void operator++(int) { ++*this; }
    /// True once the epoch is over.
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return !it.current_; }

   private:
    friend class DataLoader;
    explicit iterator(std::unique_ptr<Prefetcher<batch_type>> prefetcher) : prefetcher_(std::move(prefetcher)) {
      ++*this;
    }
    std::unique_ptr<Prefetcher<batch_type>> prefetcher_;
    std::optional<batch_type> current_;
  };

  /// Starts epoch(), waiting for its first batch, and moves epoch() on.
  iterator begin() {
    std::vector<std::int64_t> order = options_.sampler ? options_.sampler(examples(), epoch_)
                                                       : epoch_order(examples(), options_.shuffle, options_.seed, epoch_);
    ++epoch_;
    for (std::int64_t k : order)
      LT_CHECK(k >= 0 && k < examples(), "DataLoader: the sampler gave index ", k, " of a dataset of ", examples());
    std::int64_t batches = this->batches(static_cast<std::int64_t>(order.size()));
    auto produce = [dataset = dataset_, order = std::move(order), batches, batch_size = options_.batch_size,
                    next = std::min(std::exchange(first_batch_, 0), batches)]() mutable -> std::optional<batch_type> {
      if (next == batches) return std::nullopt;
      std::int64_t begin = next++ * batch_size;
      std::int64_t end = std::min(begin + batch_size, static_cast<std::int64_t>(order.size()));
      std::vector<batch_type> examples;
      examples.reserve(static_cast<std::size_t>(end - begin));
      for (std::int64_t k = begin; k < end; ++k) examples.push_back(dataset->get(order[static_cast<std::size_t>(k)]));
      return collate(std::span<const batch_type>(examples));
    };
    return iterator(std::make_unique<Prefetcher<batch_type>>(std::move(produce),
                                                             static_cast<std::size_t>(options_.prefetch)));
  }
  /// The end of an epoch.
  std::default_sentinel_t end() const { return {}; }

 private:
  /// Examples an epoch reads.
  std::int64_t read_per_epoch() const {
    return options_.sampler ? static_cast<std::int64_t>(options_.sampler(examples(), epoch_).size()) : examples();
  }
  std::int64_t examples() const {
    auto n = static_cast<std::int64_t>(dataset_->size());
    LT_CHECK(n >= 0, "DataLoader: the dataset reports a negative size ", n);
    return n;
  }

  std::shared_ptr<const D> dataset_;
  DataLoaderOptions options_;
  std::uint64_t epoch_ = 0;
  std::int64_t first_batch_ = 0;  // where the next epoch starts (set_position)
};

}  // namespace lt::data
