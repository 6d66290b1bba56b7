#pragma once
// A lock for sections of a few instructions taken as often as once per traced op: an uncontended
// std::mutex costs a library call each way, this an atomic exchange and a store.
#include <atomic>
#include <thread>

namespace lt {

class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();  // wait without writing
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace lt
