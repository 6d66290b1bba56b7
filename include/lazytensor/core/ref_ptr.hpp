#pragma once
// An owning handle to an object that keeps its own count (RefCounted): a copy is one atomic
// add, and the last release one atomic subtract, with no separate count block and no weak
// count. Tracing makes a tensor state per op, so these are paid on every op. A registry that
// lists objects without owning them takes a handle with try_share, which fails once the count
// has reached zero: an object being destroyed is never revived.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace lt {

template <class T> class RefPtr;

/// The base of objects held by RefPtr: the count of their handles.
class RefCounted {
 protected:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  ~RefCounted() = default;

 private:
  template <class> friend class RefPtr;
  mutable std::atomic<std::int64_t> refs_{1};  // a new object belongs to the handle that adopts it
};

/// A handle to a T derived from RefCounted. When the last handle goes, it calls
/// ref_released(T*), found by argument-dependent lookup, which destroys the object and frees
/// its memory.
template <class T> class RefPtr {
 public:
  RefPtr() noexcept = default;
  RefPtr(std::nullptr_t) noexcept {}  // NOLINT: null converts, as for the standard handles
  RefPtr(const RefPtr& o) noexcept : p_(o.p_) {
    if (p_ != nullptr) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  RefPtr(RefPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  RefPtr& operator=(const RefPtr& o) noexcept {
    RefPtr(o).swap(*this);
    return *this;
  }
  RefPtr& operator=(RefPtr&& o) noexcept {
    RefPtr(std::move(o)).swap(*this);
    return *this;
  }
  ~RefPtr() {
    // acq_rel: the object's last user sees every other user's writes before destroying it.
    if (p_ != nullptr && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) ref_released(p_);
  }

  /// Takes over the first count of `p`, an object just made.
  static RefPtr adopt(T* p) noexcept {
    RefPtr r;
    r.p_ = p;
    return r;
  }
  /// A handle to `p` while another handle still holds it; null once its count has reached
  /// zero. The caller keeps `p`'s memory alive meanwhile (a registry does, under the lock its
  /// objects take to leave it).
  static RefPtr try_share(T* p) noexcept {
    std::int64_t n = p->refs_.load(std::memory_order_relaxed);
    while (n > 0)
      if (p->refs_.compare_exchange_weak(n, n + 1, std::memory_order_acquire, std::memory_order_relaxed))
        return adopt(p);
    return {};
  }

  void reset() noexcept { RefPtr().swap(*this); }
  void swap(RefPtr& o) noexcept { std::swap(p_, o.p_); }
  T* get() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  T* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// The number of handles (a snapshot, as std::shared_ptr::use_count).
  long use_count() const noexcept { return p_ != nullptr ? static_cast<long>(p_->refs_.load(std::memory_order_relaxed)) : 0; }

  friend bool operator==(const RefPtr& a, const RefPtr& b) noexcept { return a.p_ == b.p_; }
  friend bool operator==(const RefPtr& a, std::nullptr_t) noexcept { return a.p_ == nullptr; }

 private:
  T* p_ = nullptr;
};

}  // namespace lt
