#pragma once
// Copies between strided views. Ops that only rearrange values move each element as an
// unsigned unit of its size, so they instantiate per element size (1, 2, 4, 8 bytes), not per
// dtype.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::kernels {

/// Calls f(Tag<U>{}) with the unsigned type of `size` bytes: moving a U moves an element.
template <class F>
decltype(auto) visit_unit(std::size_t size, F&& f) {
  switch (size) {
    case 1: return f(Tag<std::uint8_t>{});
    case 2: return f(Tag<std::uint16_t>{});
    case 4: return f(Tag<std::uint32_t>{});
    case 8: return f(Tag<std::uint64_t>{});
    default: break;
  }
  fail("no element unit of ", size, " bytes");
}

/// dst = src, elementwise in dst's index order. Both may have any strides (dst may be a
/// window of a larger array) and src may broadcast to dst's shape; dtypes are converted.
inline void copy_strided(const View& src, const View& dst) {
  std::int64_t n = dst.numel();
  if (n == 0) return;
  bool same = src.dtype == dst.dtype;
  std::size_t size = itemsize(dst.dtype);
  if (same && src.shape == dst.shape && src.contiguous() && dst.contiguous()) {
    parallel_blocks(n, parallel_threshold, [&](std::int64_t b, std::int64_t e) {
      std::memcpy(dst.data + b * static_cast<std::int64_t>(size), src.data + b * static_cast<std::int64_t>(size),
                  static_cast<std::size_t>(e - b) * size);
    });
    return;
  }
  if (same) {
    Strides from = broadcast_strides(src.shape, src.strides, dst.shape);
    visit_unit(size, [&]<class U>(Tag<U>) {
      const U* s = src.ptr<U>();
      U* d = dst.ptr<U>();
      parallel_blocks(n, parallel_threshold, [&](std::int64_t b, std::int64_t e) {
        InnerRuns r(dst.shape, from, b, false), w(dst.shape, dst.strides, b, false);  // in step
        for (std::int64_t i = b; i < e; r.next(), w.next()) {
          const std::int64_t run = std::min(e - i, w.left());
          const U* in = s + r.offset();
          U* out = d + w.offset();
          if (r.stride == 1 && w.stride == 1) std::copy_n(in, run, out);
          else for (std::int64_t k = 0; k < run; ++k) out[k * w.stride] = in[k * r.stride];
          i += run;
        }
      });
    });
    return;
  }
  if (dst.contiguous()) return copy_into(src, dst);
  // Converting into a strided window: read chunks in dst's dtype, then spread them out.
  Operand op(src, dst.shape);
  visit_storage(dst.dtype, [&]<class T>(Tag<T>) {
    T* d = dst.ptr<T>();
    parallel_blocks(n, parallel_threshold, [&](std::int64_t b, std::int64_t e) {
      constexpr std::int64_t chunk = 512;
      T buf[chunk];
      OffsetWalker w(dst.shape, dst.strides, b);
      for (std::int64_t c = b; c < e; c += chunk) {
        std::int64_t m = std::min(e, c + chunk) - c;
        load_chunk<T>(op, dst.shape, c, c + m, buf);
        for (std::int64_t i = 0; i < m; ++i, w.next()) d[w.offset()] = buf[i];
      }
    });
  });
}

/// Keeps the smallest position reported by parallel blocks, so that an error names the same
/// element whatever the number of threads.
class FirstPosition {
 public:
  explicit FirstPosition(std::int64_t none) : none_(none), pos_(none) {}
  void report(std::int64_t p) {
    std::int64_t cur = pos_.load(std::memory_order_relaxed);
    while (p < cur && !pos_.compare_exchange_weak(cur, p, std::memory_order_relaxed)) {}
  }
  bool found() const { return pos_.load() != none_; }
  std::int64_t get() const { return pos_.load(); }

 private:
  std::int64_t none_;
  std::atomic<std::int64_t> pos_;
};

/// An element of an i32 or i64 index view, by element offset.
inline std::int64_t index_at(const View& index, std::int64_t offset) {
  return index.dtype == DType::i32 ? index.ptr<std::int32_t>()[offset] : index.ptr<std::int64_t>()[offset];
}

}  // namespace lt::kernels
