#pragma once
// Fixed-size blocks for objects that tracing makes by the hundred per step and frees together
// (IR nodes, tensor handles): a free list per thread, refilled from large slabs, so that a
// block costs a pointer swap, and blocks made one after another lie next to each other,
// which a walk of the graph later reads in about that order.
//
// A thread that frees more blocks than it makes (a worker dropping a step's graph) hands its
// surplus to a shared list, which a thread that runs dry takes from before it carves a new
// slab: memory stays bounded by the most blocks alive at once.
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lt {

namespace detail {

template <std::size_t Size, std::size_t Align>
class BlockPool {
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr std::size_t align = Align < alignof(FreeBlock) ? alignof(FreeBlock) : Align;
  static constexpr std::size_t block_size = ((Size < sizeof(FreeBlock) ? sizeof(FreeBlock) : Size) + align - 1) / align * align;
  static constexpr std::size_t blocks_per_slab = block_size < 4096 ? (std::size_t{64} << 10) / block_size : 16;
  /// A pool past `huge_slabs_after` slabs holds a large graph: it carves slabs of one huge page
  /// from then on, so that a walk over that graph's nodes takes a TLB entry per 2 MiB rather than
  /// per 4 KiB.
  static constexpr std::size_t huge_slabs_after = 16;
  static constexpr std::size_t huge_slab_bytes = std::size_t{2} << 20;
  static constexpr std::size_t blocks_per_huge_slab = huge_slab_bytes / block_size;
  static constexpr std::size_t batch = 256;  // blocks moved between a thread and the shared list at once

  /// The lists shared by all threads: batches of free blocks, and every slab (never freed).
  struct Shared {
    std::mutex mu;
    std::vector<std::pair<FreeBlock*, std::size_t>> batches;
    std::vector<std::byte*> slabs;
    std::size_t bytes = 0;  // carved in all
  };
  static Shared& shared() {
    static Shared* s = new Shared;  // outlives every thread's list, which returns to it at exit
    return *s;
  }

  // Trivially destructible, so that blocks freed after the thread's destructors have run (a
  // static tensor at exit) still find it; `closed` then sends them straight to the shared list.
  struct Local {
    FreeBlock* head = nullptr;
    std::size_t count = 0;
    bool closed = false;
  };
  static void hand_over(FreeBlock* head, std::size_t count) {
    Shared& s = shared();
    std::lock_guard lock(s.mu);
    s.batches.emplace_back(head, count);
  }
  struct Closer {
    Local* l;
    ~Closer() {
      if (l->head != nullptr) hand_over(l->head, l->count);
      *l = Local{nullptr, 0, true};
    }
  };
  static Local& local() {
    thread_local Local l;
    thread_local Closer closer{&l};
    (void)closer;
    return l;
  }

  static void refill(Local& l) {
    Shared& s = shared();
    std::lock_guard lock(s.mu);
    if (!s.batches.empty()) {
      auto [head, count] = s.batches.back();
      s.batches.pop_back();
      l.head = head;
      l.count = count;
      return;
    }
    const bool huge = s.slabs.size() >= huge_slabs_after && blocks_per_huge_slab > 0;
    const std::size_t blocks = huge ? blocks_per_huge_slab : blocks_per_slab;
    std::byte* slab = huge ? carve_huge_slab() : static_cast<std::byte*>(::operator new(blocks * block_size, std::align_val_t{align}));
    s.slabs.push_back(slab);
    s.bytes += blocks * block_size;
    // Threaded so that the first block handed out is the lowest address.
    for (std::size_t k = blocks; k-- > 0;) {
      auto* b = reinterpret_cast<FreeBlock*>(slab + k * block_size);
      b->next = l.head;
      l.head = b;
    }
    l.count = blocks;
  }
  /// A slab aligned to a huge page, which the kernel is asked to back with one (where
  /// transparent huge pages are only given on request, as Debian's default is).
  static std::byte* carve_huge_slab() {
    auto* slab = static_cast<std::byte*>(::operator new(huge_slab_bytes, std::align_val_t{huge_slab_bytes}));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(slab, huge_slab_bytes, MADV_HUGEPAGE);  // advice only: without it, ordinary pages
#endif
    return slab;
  }

 public:
  /// The bytes of all slabs carved so far: the pool's footprint.
  static std::size_t carved_bytes() {
    Shared& s = shared();
    std::lock_guard lock(s.mu);
    return s.bytes;
  }

  static void* take() {
    Local& l = local();
    if (l.head == nullptr) refill(l);
    FreeBlock* b = l.head;
    l.head = b->next;
    --l.count;
    return b;
  }
  static void give(void* p) {
    Local& l = local();
    auto* b = static_cast<FreeBlock*>(p);
    if (l.closed) return hand_over(new (b) FreeBlock{nullptr}, 1);
    b->next = l.head;
    l.head = b;
    if (++l.count < 2 * batch) return;
    // Keep `batch` blocks here; the rest go where other threads can take them.
    FreeBlock* last = l.head;
    for (std::size_t k = 1; k < batch; ++k) last = last->next;
    FreeBlock* surplus = last->next;
    last->next = nullptr;
    std::size_t surplus_count = l.count - batch;
    l.count = batch;
    hand_over(surplus, surplus_count);
  }
};

}  // namespace detail

/// A std allocator whose single-object allocations come from a BlockPool: for
/// std::allocate_shared of objects made often (the pool then holds object and count together).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U> PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding, as allocators do

  T* allocate(std::size_t n) {
    if (n == 1) return static_cast<T*>(detail::BlockPool<sizeof(T), alignof(T)>::take());
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) {
    if (n == 1) return detail::BlockPool<sizeof(T), alignof(T)>::give(p);
    std::allocator<T>{}.deallocate(p, n);
  }
  /// Aggregates (Node) are built with braces where parentheses do not construct them: clang
  /// before 16 lacks C++20's parenthesized aggregate initialization, which the default
  /// construct (std::construct_at) needs to make one in place, without a move.
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    void* at = const_cast<void*>(static_cast<const volatile void*>(p));
    if constexpr (std::is_constructible_v<U, Args&&...>)
      ::new (at) U(std::forward<Args>(args)...);
    else
      ::new (at) U{std::forward<Args>(args)...};
  }
  template <class U> friend bool operator==(const PoolAllocator&, const PoolAllocator<U>&) { return true; }
};

}  // namespace lt
