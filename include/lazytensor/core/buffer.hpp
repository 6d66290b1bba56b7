#pragma once
// Shared, 64-byte aligned storage.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "lazytensor/core/env.hpp"
#include "lazytensor/core/error.hpp"

namespace lt {

inline constexpr std::size_t buffer_alignment = 64;

namespace detail {
/// Blocks of at least this size start on a huge-page boundary and ask the kernel for huge
/// pages: streamed over with ordinary pages, every 4 KiB costs a TLB miss and a page fault.
inline constexpr std::size_t huge_block_bytes = std::size_t{4} << 20;
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
inline std::size_t block_alignment(std::size_t bytes) { return bytes >= huge_block_bytes ? huge_page_bytes : buffer_alignment; }

/// Freed large blocks, kept for reuse. Each step of a shape-static loop frees blocks of the
/// sizes the next step allocates; reusing them spares the page faults of fresh memory, which
/// cost more than computing an elementwise result. At most LT_BUFFER_CACHE_MB (default 1024)
/// are kept; 0 turns the cache off.
class BlockCache {
 public:
  static constexpr std::size_t min_bytes = std::size_t{1} << 20;

  static BlockCache& instance() {
    static BlockCache* cache = new BlockCache;  // never destroyed: buffers may outlive statics
    return *cache;
  }
  void* take(std::size_t bytes) {
    if (bytes < min_bytes) return nullptr;
    std::lock_guard lock(mu_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= bytes;
    return p;
  }
  void give(void* p, std::size_t bytes) {
    if (bytes >= min_bytes) {
      std::lock_guard lock(mu_);
      if (cached_ + bytes <= limit_) {
        free_.emplace(bytes, p);
        cached_ += bytes;
        return;
      }
    }
    ::operator delete(p, std::align_val_t{block_alignment(bytes)});
  }
  std::size_t cached_bytes() {
    std::lock_guard lock(mu_);
    return cached_;
  }

 private:
  BlockCache() {
    limit_ = static_cast<std::size_t>(env_count("LT_BUFFER_CACHE_MB", 1024)) << 20;
  }
  std::mutex mu_;
  std::unordered_multimap<std::size_t, void*> free_;
  std::size_t cached_ = 0;
  std::size_t limit_;
};
}  // namespace detail

/// A reference-counted block of aligned bytes. Copies share the block.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes) : bytes_(bytes) {
    LT_CHECK(bytes <= max_bytes, "out of memory allocating ", bytes, " bytes");  // the rounding below cannot wrap
    // Round up so that vectorised loops may read a whole last packet.
    std::size_t padded = (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
    if (padded == 0) padded = buffer_alignment;
    void* p = detail::BlockCache::instance().take(padded);
    if (p == nullptr) p = allocate_block(padded);
    LT_CHECK(p != nullptr, "out of memory allocating ", bytes, " bytes");
    data_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [padded](std::byte* q) {
      detail::BlockCache::instance().give(q, padded);
    });
  }
  static Buffer zeroed(std::size_t bytes) {
    Buffer b(bytes);
    std::memset(b.data(), 0, bytes);
    return b;
  }

  /// A buffer over `bytes` bytes that another object owns (a mapped file, say): `data`'s
  /// owner keeps them alive while any copy of the buffer lives. As with allocated buffers, a
  /// whole last packet past the end must be readable.
  static Buffer adopt(std::shared_ptr<std::byte> data, std::size_t bytes) {
    Buffer b;
    b.data_ = std::move(data);
    b.bytes_ = bytes;
    return b;
  }

  /// The most one buffer may hold: what a pointer difference can span.
  static constexpr std::size_t max_bytes = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / 2;

  std::byte* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  static void* allocate_block(std::size_t bytes) {
    void* p = ::operator new(bytes, std::align_val_t{detail::block_alignment(bytes)}, std::nothrow);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: where the kernel gives no huge pages, the block has ordinary ones.
    if (p != nullptr && bytes >= detail::huge_block_bytes) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
  }

  std::shared_ptr<std::byte> data_;
  std::size_t bytes_ = 0;
};

}  // namespace lt
