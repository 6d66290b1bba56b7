#pragma once
// The arithmetic of collectives: reducing runs of values from several replicas in one fixed
// order, so that every replica, every run and every thread count gets the same bits.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/core/replica.hpp"
#include "lazytensor/ops/kernels/packet.hpp"

namespace lt::distributed {

/// acc[i] = acc[i] op x[i] for i < n. Max and min propagate NaN, as PyTorch's do.
template <class T>
void combine_run(ReduceOp op, T* acc, const T* x, std::int64_t n) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      for (std::int64_t i = 0; i < n; ++i) acc[i] += x[i];
      break;
    case ReduceOp::max:
      for (std::int64_t i = 0; i < n; ++i)
        if (x[i] > acc[i] || x[i] != x[i]) acc[i] = acc[i] != acc[i] ? acc[i] : x[i];
      break;
    case ReduceOp::min:
      for (std::int64_t i = 0; i < n; ++i)
        if (x[i] < acc[i] || x[i] != x[i]) acc[i] = acc[i] != acc[i] ? acc[i] : x[i];
      break;
  }
}

/// dst[0, n) = the reduction of sources[*][at, at + n) as a tree of halves: the first half of
/// the sources, then the second, then the two combined. With a power-of-two count of replicas
/// this is the tree in which one replica would add the same values, so a batch split over
/// replicas can sum in one fixed tree. `scratch` holds a run of n values per level below.
template <class T>
void reduce_tree(ReduceOp op, std::span<const std::byte* const> sources, std::size_t at, std::int64_t n, T* dst,
                 T* scratch, std::int64_t per_level) {
  if (sources.size() == 1) {
    std::memcpy(dst, sources[0] + at, static_cast<std::size_t>(n) * sizeof(T));
    return;
  }
  const std::size_t half = sources.size() / 2;
  reduce_tree(op, sources.first(half), at, n, dst, scratch, per_level);
  if (sources.size() - half == 1) return combine_run(op, dst, reinterpret_cast<const T*>(sources[half] + at), n);
  reduce_tree(op, sources.subspan(half), at, n, scratch, scratch + per_level, per_level);
  combine_run(op, dst, scratch, n);
}

/// Values of one block, small enough to stay in L1 with its scratch while the replicas' runs
/// are combined.
inline constexpr std::int64_t combine_block_bytes = 4 * 1024;

/// Reduces elements [begin, end) of `sources` (all of dtype `t`; the order of the list fixes
/// the tree, and so the result, everywhere) and writes the result into each of `targets`.
/// Reads every source once and writes every target once; with `stream`, past the caches
/// (targets far larger than them: call kernels::pk::stream_fence() after).
inline void reduce_range(ReduceOp op, DType t, std::span<const std::byte* const> sources,
                         std::span<std::byte* const> targets, std::int64_t begin, std::int64_t end,
                         bool stream = false) {
  const auto size = static_cast<std::int64_t>(itemsize(t));
  int levels = 0;
  for (std::size_t n = sources.size(); n > 2; n = n - n / 2) ++levels;
  alignas(64) std::byte block[combine_block_bytes * (1 + 6)];  // up to 64 sources: 6 levels of scratch
  LT_CHECK(levels <= 6, "collective: ", sources.size(), " sources are more than a reduction takes");
  const std::int64_t per_block = combine_block_bytes / size;
  for (std::int64_t b = begin; b < end; b += per_block) {
    const std::int64_t n = std::min(per_block, end - b);
    const auto bytes = static_cast<std::size_t>(n * size), at = static_cast<std::size_t>(b * size);
    visit(t, [&]<class T>(Tag<T>) {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        T* first = reinterpret_cast<T*>(block);
        reduce_tree(op, sources, at, n, first, first + per_block, per_block);
      } else {
        fail("collective: cannot reduce ", t, " values");
      }
    });
    for (std::byte* target : targets) {
      if (stream) kernels::pk::stream_copy(target + at, block, bytes);
      else std::memcpy(target + at, block, bytes);
    }
  }
}

}  // namespace lt::distributed
