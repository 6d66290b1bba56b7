#pragma once
// Per lazy device: the tensors whose values are pending. The barrier computes exactly these.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

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
    // A tensor may have been tracked more than once (assign); compute it once.
    std::sort(live.begin(), live.end());
    live.erase(std::unique(live.begin(), live.end()), live.end());
    return live;
  }

 private:
  std::mutex mu_;
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
