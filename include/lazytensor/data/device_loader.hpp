#pragma once
// DeviceLoader: batches of a loader moved onto a lazy device ahead of their step, with the
// step's barrier placed as the loop moves to the next batch.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <ranges>
#include <utility>

#include "lazytensor/data/example.hpp"
#include "lazytensor/data/prefetcher.hpp"
#include "lazytensor/runtime/api.hpp"
#include "lazytensor/runtime/values.hpp"

namespace lt::data {

/// What a DeviceLoader reads: a range of batches on lt::cpu (a DataLoader, a SampleGenerator).
template <class S>
concept BatchSource = std::ranges::input_range<S&> && Example<std::ranges::range_value_t<S&>>;

/// Options of DeviceLoader.
struct DeviceLoaderOptions {
  /// Batches kept ready on the device ahead of the one the loop works on.
  std::int64_t prefetch = 2;
};

/// The batches of `source` on lazy device `device`. A worker thread moves the next batches to
/// the device while the current step is traced and run, and advancing the loop places the
/// barrier of the step just traced (`lt::sync(device)`, which queues the step and returns): a
/// training loop needs no barrier of its own, and runs one step per batch.
///
///   for (auto [x, y] : lt::data::DeviceLoader(loader, dev)) { ...one training step... }
///
/// An lvalue source is referred to, so it must outlive the DeviceLoader; an rvalue is moved in.
/// Leaving the loop early places no barrier: the last, unfinished step stays pending.
template <BatchSource Source>
class DeviceLoader {
 public:
  /// A batch: the source's batch type, its tensors on the lazy device.
  using batch_type = std::remove_cvref_t<std::ranges::range_value_t<Source&>>;

  /// Loads `source`'s batches onto `device`; raises lt::Error unless `device` is lazy and prefetch is at
  /// least 1.
  DeviceLoader(Source&& source, Device device, DeviceLoaderOptions options = {})
      : source_(std::forward<Source>(source)), device_(device), options_(options) {
    LT_CHECK(device.is_lazy(), "DeviceLoader: ", device, " is not a lazy device");
    LT_CHECK(options_.prefetch >= 1, "DeviceLoader: prefetch must be at least 1, got ", options_.prefetch);
  }

  /// The lazy device the batches go to.
  Device device() const { return device_; }
  /// Batches per pass, where the source knows it.
  std::int64_t size() const
    requires requires(const std::remove_reference_t<Source>& s) { s.size(); }
  {
    return static_cast<std::int64_t>(source_.size());
  }

  /// An input iterator over one pass's batches on the device; it owns the pass's worker thread.
  class iterator {
   public:
    /// The batch type.
    using value_type = batch_type;
    /// Required of an input iterator; unused.
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    /// The current batch, on the device.
    const batch_type& operator*() const { return *current_; }
    /// The current batch's fields.
    const batch_type* operator->() const { return &*current_; }
    /// The barrier of the step traced on the current batch, then the next batch.
    iterator& operator++() {
      sync(pass_->device);
      current_ = pass_->prefetcher->next();
      if (!current_) pass_.reset();
      return *this;
    }
    /// Advances, as operator++().
    void operator++(int) { ++*this; }
    /// True once the pass is over.
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return !it.current_; }

   private:
    friend class DeviceLoader;
    /// One pass over the source: its iterator, read only by the worker thread.
    struct Pass {
      std::ranges::iterator_t<Source&> next;
      std::ranges::sentinel_t<Source&> end;
      Device device;
      bool started = false;
      std::unique_ptr<Prefetcher<batch_type>> prefetcher;  // declared last: stops before the iterator goes
    };

    iterator(Source& source, Device device, std::size_t prefetch)
        : pass_(std::make_unique<Pass>(Pass{std::ranges::begin(source), std::ranges::end(source), device, false, nullptr})) {
      Pass* pass = pass_.get();
      pass->prefetcher = std::make_unique<Prefetcher<batch_type>>(
          [pass]() -> std::optional<batch_type> {
            // Advancing first: what fails in reaching a batch then fails in its place, after
            // the batches before it were handed on.
            if (pass->started) ++pass->next;
            pass->started = true;
            if (pass->next == pass->end) return std::nullopt;
            return map_tensors(batch_type(*pass->next), [&](const Tensor& t) { return t.to(pass->device); });
          },
          prefetch);
      current_ = pass_->prefetcher->next();
      if (!current_) pass_.reset();
    }

    std::unique_ptr<Pass> pass_;
    std::optional<batch_type> current_;
  };

  /// Starts a pass over the source (a new epoch of a DataLoader) and waits for its first batch.
  iterator begin() { return iterator(source_, device_, static_cast<std::size_t>(options_.prefetch)); }
  /// The end of a pass.
  std::default_sentinel_t end() const { return {}; }

 private:
  Source source_;
  Device device_;
  DeviceLoaderOptions options_;
};

template <class S>
DeviceLoader(S&&, Device, DeviceLoaderOptions = {}) -> DeviceLoader<S>;

}  // namespace lt::data
