#pragma once
// A worker thread that prepares items ahead of their consumer, through a bounded queue.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

#include "lazytensor/core/error.hpp"
#include "lazytensor/runtime/profiler_events.hpp"

namespace lt::data {

/// Runs `produce` on a thread of its own until it returns no item, keeping at most `capacity`
/// items ready. The consumer takes them in order with next(). An exception thrown by `produce`
/// reaches the consumer after the items made before it. Destroying the prefetcher stops the
/// worker: it finishes the item it is making, drops it, and is joined.
template <class T>
class Prefetcher {
 public:
  using Produce = std::function<std::optional<T>()>;

  Prefetcher(Produce produce, std::size_t capacity) : produce_(std::move(produce)), capacity_(capacity) {
    LT_CHECK(capacity >= 1, "Prefetcher: the capacity must be at least 1");
    worker_ = std::jthread([this](std::stop_token stop) { run(stop); });
  }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  ~Prefetcher() {
    worker_.request_stop();
    worker_.join();  // before the queue and `produce_` go: the worker uses both
  }

  /// The next item, waiting for it; none once the worker has made its last one. Rethrows what
  /// the worker threw, once, in the place of the item it failed to make.
  std::optional<T> next() {
    std::unique_lock lock(mu_);
    if (queue_.empty() && !done_) {
      profiler::detail::Span waiting("data loader wait", "data");  // the consumer is ahead of the worker
      ready_.wait(lock, [&] { return !queue_.empty() || done_; });
    }
    if (!queue_.empty()) {
      std::optional<T> item(std::move(queue_.front()));
      queue_.pop_front();
      lock.unlock();
      space_.notify_one();
      return item;
    }
    if (std::exception_ptr e = std::exchange(error_, nullptr)) std::rethrow_exception(e);
    return std::nullopt;
  }

 private:
  void run(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      std::optional<T> item;
      try {
        item = produce_();
      } catch (...) {
        finish(std::current_exception());
        return;
      }
      if (!item) break;
      std::unique_lock lock(mu_);
      if (!space_.wait(lock, stop, [&] { return queue_.size() < capacity_; })) return;
      queue_.push_back(std::move(*item));
      lock.unlock();
      ready_.notify_one();
    }
    finish(nullptr);
  }

  void finish(std::exception_ptr error) {
    {
      std::lock_guard lock(mu_);
      done_ = true;
      error_ = std::move(error);
    }
    ready_.notify_all();
  }

  Produce produce_;
  const std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_;      // an item or the end is there to take
  std::condition_variable_any space_;  // the queue has room; also woken by a stop request
  std::deque<T> queue_;
  bool done_ = false;
  std::exception_ptr error_;
  std::jthread worker_;  // last: started once the members it uses exist
};

}  // namespace lt::data
