#pragma once
// The shared state behind lt::Tensor handles, and each lazy device's list of the states whose
// values are pending: the barrier computes exactly those. A state is listed when it gets a
// pending value and leaves the list when the barrier takes it or when it is destroyed, so the
// list never holds a dead state and needs no weak handles.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "lazytensor/core/asymmetric_fence.hpp"
#include "lazytensor/core/block_pool.hpp"
#include "lazytensor/core/device.hpp"
#include "lazytensor/core/ref_ptr.hpp"
#include "lazytensor/core/spin_lock.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt {

struct AutogradMeta;  // autograd/: the reverse-mode state of a tensor that requires grad
class LazyContext;

/// Shared state of a tensor. Every handle copy refers to the same impl, so rebinding the
/// impl (an in-place update) is seen through all of them.
struct TensorImpl : RefCounted {
  // A constructor, not aggregate initialisation, which GCC precedes by zeroing the whole
  // object: a cost on every op traced.
  TensorImpl(Device device_, const Meta& meta_, NodePtr node_, Array data_)
      : device(device_), meta(meta_), node(std::move(node_)), data(std::move(data_)) {}
  ~TensorImpl();  // leaves the pending list it is on

  Device device;
  Meta meta;
  NodePtr node;  // lazy devices: the pending value, or a device_data leaf after a barrier
  Array data;    // eager device: the value
  std::shared_ptr<AutogradMeta> autograd;  // null unless the tensor requires grad

 private:
  friend class LazyContext;
  // The context whose pending list holds this state, and where; both changed under that
  // context's lock. The context is read without it only by the destructor, when no other
  // handle is left to list the state anywhere else.
  std::atomic<LazyContext*> listed_in_{nullptr};
  std::size_t listed_at_ = 0;
};

using TensorImplPtr = RefPtr<TensorImpl>;

/// The last handle of `t` is gone: destroy it and return its block to the pool.
inline void ref_released(TensorImpl* t) {
  t->~TensorImpl();
  PoolAllocator<TensorImpl>{}.deallocate(t, 1);
}

/// A new tensor state with one handle.
inline TensorImplPtr make_tensor_impl(Device device, const Meta& meta, NodePtr node, Array data) {
  PoolAllocator<TensorImpl> pool;
  TensorImpl* block = pool.allocate(1);
  try {
    return TensorImplPtr::adopt(new (block) TensorImpl(device, meta, std::move(node), std::move(data)));
  } catch (...) {
    pool.deallocate(block, 1);
    throw;
  }
}

/// Per lazy device: the tensors whose values are pending, in the order they were first listed
/// (the order of tracing, the same in every run of a loop, so that a step's roots and its
/// plan-cache key are the same too).
class LazyContext {
 public:
  /// Lists `t`, a live tensor that now holds a pending value, unless it is listed here already
  /// (it then keeps its first place). A tensor rebound from another device leaves that one's list.
  void track(TensorImpl& t) {
    LazyContext* other = t.listed_in_.load(std::memory_order_relaxed);
    if (other != nullptr && other != this) other->untrack(t);
    std::lock_guard lock(mu_);
    if (t.listed_in_.load(std::memory_order_relaxed) == this) return;
    t.listed_at_ = listed_.size();
    t.listed_in_.store(this, std::memory_order_relaxed);
    listed_.push_back(&t);
    // Handles die all the time during tracing, each leaving a hole: close them up before the
    // list grows without bound.
    if (listed_.size() >= compact_at_) compact();
  }

  /// Takes `t` off the list, if it is on it.
  void untrack(TensorImpl& t) {
    std::lock_guard lock(mu_);
    if (t.listed_in_.load(std::memory_order_relaxed) != this) return;
    listed_[t.listed_at_] = nullptr;
    t.listed_in_.store(nullptr, std::memory_order_relaxed);
  }

  /// Runs `rebind(*t)` and returns its result, provided `t` is listed here and exactly
  /// `handles` handles hold it (else returns false): then no other code can see the state
  /// change, and no barrier takes the state meanwhile (see owner_). `rebind` runs with no
  /// other thread taking this list: a few stores, no allocation, no release of a last handle.
  template <class Rebind> [[gnu::always_inline]] bool rebind_unshared(const TensorImplPtr& t, long handles, Rebind&& rebind) {
    if (owner_.load(std::memory_order_relaxed) == this_thread_tag()) {
      rebinding_.store(true, std::memory_order_relaxed);
      asymmetric_fence::light();
      struct Done {
        std::atomic<bool>& rebinding;
        ~Done() { rebinding.store(false, std::memory_order_release); }
      } done{rebinding_};
      if (owner_.load(std::memory_order_relaxed) == this_thread_tag()) return rebind_if_unshared(t, handles, rebind);
    }
    return rebind_unowned(t, handles, rebind);
  }

  /// The live tensors that still hold a pending value, in list order; the list starts afresh.
  std::vector<TensorImplPtr> take_pending() {
    exclude_other_owner();
    std::vector<TensorImplPtr> live;
    {
      std::lock_guard lock(mu_);
      live.reserve(listed_.size());
      for (TensorImpl* t : listed_) {
        if (t == nullptr) continue;
        t->listed_in_.store(nullptr, std::memory_order_relaxed);
        // A state whose last handle is going is skipped: its destructor waits for this lock,
        // then finds itself off the list.
        if (TensorImplPtr p = TensorImplPtr::try_share(t)) live.push_back(std::move(p));
      }
      listed_.clear();
      compact_at_ = initial_compact_at;
    }
    // Outside the lock: dropping a last handle here takes it (to leave a list it is not on).
    std::erase_if(live, [](const TensorImplPtr& t) { return !t->node || t->node->is_data(); });
    return live;
  }

 private:
  static constexpr std::size_t initial_compact_at = 1024;

  void compact() {
    std::size_t kept = 0;
    for (TensorImpl* t : listed_)
      if (t != nullptr) {
        t->listed_at_ = kept;
        listed_[kept++] = t;
      }
    listed_.resize(kept);
    compact_at_ = std::max(initial_compact_at, kept * 2);
  }

  /// rebind_unshared on a thread that is not the owner, or was not when it began.
  template <class Rebind> [[gnu::noinline]] bool rebind_unowned(const TensorImplPtr& t, long handles, Rebind& rebind) {
    if (claim()) return rebind_unshared(t, handles, rebind);
    std::lock_guard lock(mu_);
    return rebind_if_unshared(t, handles, rebind);
  }
  // Inlined: its caller's lambda then runs without a call on every traced op.
  template <class Rebind> [[gnu::always_inline]] bool rebind_if_unshared(const TensorImplPtr& t, long handles, Rebind& rebind) {
    if (t->listed_in_.load(std::memory_order_relaxed) != this || t.use_count() != handles) return false;
    // A handle released on another thread just now: its last accesses happen before ours.
    std::atomic_thread_fence(std::memory_order_acquire);
    return rebind(*t);
  }

  // A rebind on every traced op would take the lock, an atomic exchange that waits for the
  // op's stores to land (about a tenth of an op's cost). So one thread, the owner, rebinds
  // without it. Only take_pending on another thread could see such a rebind half done: it
  // first makes the context shared (every thread then takes the lock, for good) and waits
  // for a rebind in flight. Its fence is the heavy half of an asymmetric pair, the owner's
  // the light half, so that either it sees `rebinding_` set or the owner sees the change.
  static const void* this_thread_tag() {
    static thread_local const char tag = 0;
    return &tag;
  }
  /// Makes this thread the owner if there is none yet (and the heavy fence works here).
  bool claim() {
    const void* none = nullptr;
    if (owner_.load(std::memory_order_relaxed) != nullptr) return false;
    const void* me = asymmetric_fence::available() ? this_thread_tag() : &shared_owner;
    return owner_.compare_exchange_strong(none, me, std::memory_order_acq_rel) && me != &shared_owner;
  }
  void exclude_other_owner() {
    claim();
    const void* owner = owner_.load(std::memory_order_acquire);
    if (owner == this_thread_tag() || owner == &shared_owner) return;
    owner_.store(&shared_owner, std::memory_order_seq_cst);
    asymmetric_fence::heavy();
    while (rebinding_.load(std::memory_order_acquire)) std::this_thread::yield();
  }

  static constexpr char shared_owner = 0;  // owner_ when every thread takes the lock
  std::atomic<const void*> owner_{nullptr};
  std::atomic<bool> rebinding_{false};  // the owner rebinds without the lock

  SpinLock mu_;  // held for a few stores: listing, unlisting, taking, and rebinds off the owner thread
  std::vector<TensorImpl*> listed_;  // null: a hole left by a tensor that was destroyed
  std::size_t compact_at_ = initial_compact_at;
};

namespace detail {
/// Every lazy device's context. Initialised as a constant, not as a function's static, whose
/// guard and call tracing would pay on every op; never destroyed, so that a tensor that
/// outlives static destruction still leaves its list safely.
union LazyContexts {
  constexpr LazyContexts() : all() {}
  ~LazyContexts() {}  // NOLINT: never destroys `all`, on purpose
  std::array<LazyContext, max_lazy_devices> all;
};
inline constinit LazyContexts lazy_contexts;
}  // namespace detail

/// The context of lazy device `index`.
inline LazyContext& lazy_context(int index) {
  LT_CHECK(index >= 0 && index < max_lazy_devices, "lazy device index ", index, " is out of range");
  return detail::lazy_contexts.all[static_cast<std::size_t>(index)];
}

/// Lists `t` on its device's pending list when it now holds a pending value (a lazy node
/// still to compute): after it is made or rebound.
inline void track_if_pending(TensorImpl& t) {
  if (t.device.is_lazy() && t.node && !t.node->is_data()) lazy_context(t.device.index).track(t);
}

inline TensorImpl::~TensorImpl() {
  if (LazyContext* c = listed_in_.load(std::memory_order_relaxed)) c->untrack(*this);
}

}  // namespace lt
