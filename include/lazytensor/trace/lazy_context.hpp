#pragma once
// Per lazy device: the tensors whose values are pending. The barrier computes exactly these.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "lazytensor/core/spin_lock.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt {

inline constexpr int max_lazy_devices = 64;

class LazyContext {
 public:
  /// Notes a tensor that holds a pending (not yet computed) value.
  void track(const std::shared_ptr<TensorImpl>& t) {
    std::lock_guard lock(mu_);
    pending_.push_back(t);
    // Handles die all the time during tracing; drop them before the list grows without bound.
    if (pending_.size() >= compact_at_) {
      std::erase_if(pending_, [](const std::weak_ptr<TensorImpl>& w) { return w.expired(); });
      compact_at_ = std::max<std::size_t>(1024, pending_.size() * 2);
    }
  }

  /// The live tensors that still hold a pending value; the list starts afresh.
  std::vector<std::shared_ptr<TensorImpl>> take_pending() {
    std::vector<std::weak_ptr<TensorImpl>> all;
    {
      std::lock_guard lock(mu_);
      all.swap(pending_);
      compact_at_ = 1024;
    }
    std::vector<std::shared_ptr<TensorImpl>> live;
    for (auto& w : all)
      if (auto t = w.lock(); t && t->node && !t->node->is_data()) live.push_back(std::move(t));
    // A tensor may have been tracked more than once (assign): keep its first place. The order
    // is the order of tracing, the same in every run of a loop, so that the step's graph (its
    // roots in this order) and its plan-cache key are the same too.
    std::vector<std::size_t> by_address(live.size());
    for (std::size_t k = 0; k < live.size(); ++k) by_address[k] = k;
    std::sort(by_address.begin(), by_address.end(),
              [&](std::size_t a, std::size_t b) { return live[a] != live[b] ? live[a] < live[b] : a < b; });
    std::vector<char> repeat(live.size(), 0);
    for (std::size_t k = 1; k < by_address.size(); ++k)
      repeat[by_address[k]] = live[by_address[k]] == live[by_address[k - 1]];
    std::size_t kept = 0;
    for (std::size_t k = 0; k < live.size(); ++k)
      if (!repeat[k]) live[kept++] = std::move(live[k]);
    live.resize(kept);
    return live;
  }

 private:
  SpinLock mu_;  // held for a push_back per traced op
  std::vector<std::weak_ptr<TensorImpl>> pending_;
  std::size_t compact_at_ = 1024;
};

/// The context of lazy device `index`.
inline LazyContext& lazy_context(int index) {
  static std::array<LazyContext, max_lazy_devices> contexts;
  LT_CHECK(index >= 0 && index < max_lazy_devices, "lazy device index ", index, " is out of range");
  return contexts[static_cast<std::size_t>(index)];
}

}  // namespace lt
