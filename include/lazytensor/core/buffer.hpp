#pragma once
// Shared, 64-byte aligned storage.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

#include "lazytensor/core/error.hpp"

namespace lt {

inline constexpr std::size_t buffer_alignment = 64;

/// A reference-counted block of aligned bytes. Copies share the block.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes) : bytes_(bytes) {
    // Round up so that vectorised loops may read a whole last packet.
    std::size_t padded = (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
    if (padded == 0) padded = buffer_alignment;
    void* p = ::operator new(padded, std::align_val_t{buffer_alignment}, std::nothrow);
    LT_CHECK(p != nullptr, "out of memory allocating ", bytes, " bytes");
    data_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) {
      ::operator delete(q, std::align_val_t{buffer_alignment});
    });
  }
  static Buffer zeroed(std::size_t bytes) {
    Buffer b(bytes);
    std::memset(b.data(), 0, bytes);
    return b;
  }

  std::byte* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  std::shared_ptr<std::byte> data_;
  std::size_t bytes_ = 0;
};

}  // namespace lt
