#pragma once
// Autocast's cast cache. A lazy device's data leaf never changes value: an update (an optimizer
// step, an in-place op, an assignment) rebinds the tensor to a new node, and plans write only
// their own arena and new leaves. So autocast's cast of such a leaf is made once and kept in
// the leaf, and every later step reads the kept copy instead of casting the leaf again: an
// inference loop under autocast casts its weights once, not per step. A tensor whose value
// changed holds another leaf, which has no copy yet; a copy goes when its leaf does. Casts that
// a gradient flows through (a leaf that requires grad, outside lt::no_grad) are recorded as
// ever, so that the gradient reaches the leaf.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/grad_hooks.hpp"
#include "lazytensor/trace/node.hpp"
#include "lazytensor/trace/pending.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt {

namespace detail {
/// Whether the calling thread's autocast keeps its casts of device data (the guard's
/// cache_enabled). Constant-initialised: one load.
constinit inline thread_local bool autocast_cache_state = true;
/// Bytes that the kept casts of the whole process hold.
inline std::atomic<std::int64_t> autocast_cached_bytes{0};
/// Guards every leaf's AutocastCopies. Held for a look-up or an insertion only; nothing that
/// may free a leaf runs under it.
inline std::mutex& autocast_cache_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace detail

/// The casts autocast made of one device_data leaf, at most one per dtype; held by the leaf
/// (DataNode::autocast_copies) and freed with it.
struct AutocastCopies {
  /// One kept cast.
  struct Copy {
    DType dtype;          ///< what the leaf was cast to
    Tensor value;         ///< the cast: pending until the step after it was made, then a data leaf
    std::int64_t bytes;   ///< counted in autocast_cache_bytes()
  };
  /// The kept casts (guarded by the cache's mutex).
  std::vector<Copy> copies;

  AutocastCopies() = default;
  AutocastCopies(const AutocastCopies&) = delete;
  AutocastCopies& operator=(const AutocastCopies&) = delete;
  ~AutocastCopies() {
    for (const Copy& c : copies) detail::autocast_cached_bytes.fetch_sub(c.bytes, std::memory_order_relaxed);
  }
};

/// Bytes that autocast's kept casts of device data hold now, in the whole process: 0 once the
/// leaves they were made from are gone.
inline std::int64_t autocast_cache_bytes() noexcept {
  return detail::autocast_cached_bytes.load(std::memory_order_relaxed);
}

namespace detail {

/// Whether autocast may keep its cast of `t`: `t` holds a lazy device's data leaf (a value that
/// never changes), the calling thread's autocast keeps casts, and no gradient can flow
/// through the cast (`t` requires no grad, or lt::no_grad is open).
inline bool autocast_cacheable(const Tensor& t) {
  const TensorImpl& impl = t.impl();
  return autocast_cache_state && impl.device.is_lazy() && impl.node && impl.node->is_data() &&
         (!impl.autograd || no_grad_depth > 0);
}

/// Whether leaf `n` will never have a value: the step that was to write it failed. A kept cast
/// of such a leaf is made again.
inline bool failed_leaf(const Node& n) {
  PendingStep* step = pending_step(n);
  if (step == nullptr || step->ready.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(step->mu);
  return step->error != nullptr;
}

/// `t` (autocast_cacheable) cast to `to`: the copy kept in its leaf, else `cast()`, which is
/// then kept. A copy still pending is the same lazy tensor, so the barrier computes it once and
/// later steps read its leaf. Counters: AutocastCastCacheHits, AutocastCastCacheMisses.
template <class Cast> Tensor autocast_cached(const Tensor& t, DType to, Cast&& cast) {
  static metrics::Counter& hits = metrics::counter_handle("AutocastCastCacheHits");
  static metrics::Counter& misses = metrics::counter_handle("AutocastCastCacheMisses");
  const NodePtr source = t.impl().node;  // holds the leaf while this runs
  const DataNode& leaf = source->leaf();
  {
    std::lock_guard lock(autocast_cache_mutex());
    if (leaf.autocast_copies)
      for (const AutocastCopies::Copy& c : leaf.autocast_copies->copies)
        if (c.dtype == to && !failed_leaf(*c.value.impl().node)) {
          hits.add();
          return c.value;
        }
  }
  misses.add();
  Tensor made = cast();
  const std::int64_t bytes = made.numel() * static_cast<std::int64_t>(itemsize(to));
  Tensor replaced;  // a failed copy, released after the lock
  {
    std::lock_guard lock(autocast_cache_mutex());
    if (!leaf.autocast_copies) leaf.autocast_copies = std::make_shared<AutocastCopies>();
    std::vector<AutocastCopies::Copy>& copies = leaf.autocast_copies->copies;
    auto same = std::find_if(copies.begin(), copies.end(), [&](const AutocastCopies::Copy& c) { return c.dtype == to; });
    if (same == copies.end()) {
      copies.push_back({to, made, bytes});
    } else {  // failed, or kept by another thread meanwhile: the newest one stays
      autocast_cached_bytes.fetch_sub(same->bytes, std::memory_order_relaxed);
      replaced = std::exchange(same->value, made);
      same->bytes = bytes;
    }
    autocast_cached_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  return made;
}

}  // namespace detail
}  // namespace lt
