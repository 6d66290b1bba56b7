#pragma once
// The arithmetic of collectives: reducing runs of values from several replicas in one fixed
// order, so that every replica, every run and every thread count gets the same bits.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/replica.hpp"

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

/// Values of one block, small enough to stay in L1 while the replicas' runs are added to it.
inline constexpr std::int64_t combine_block_bytes = 16 * 1024;

/// Reduces elements [begin, end) of `sources` (all of dtype `t`, in their order: the fixed
/// order that makes the result the same everywhere) and writes the result into each of
/// `targets`. Reads every source once and writes every target once.
inline void reduce_range(ReduceOp op, DType t, std::span<const std::byte* const> sources,
                         std::span<std::byte* const> targets, std::int64_t begin, std::int64_t end) {
  const auto size = static_cast<std::int64_t>(itemsize(t));
  alignas(64) std::byte block[combine_block_bytes];
  const std::int64_t per_block = combine_block_bytes / size;
  for (std::int64_t b = begin; b < end; b += per_block) {
    const std::int64_t n = std::min(per_block, end - b);
    const auto bytes = static_cast<std::size_t>(n * size), at = static_cast<std::size_t>(b * size);
    std::memcpy(block, sources[0] + at, bytes);
    for (std::size_t s = 1; s < sources.size(); ++s) {
      visit(t, [&]<class T>(Tag<T>) {
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
          combine_run(op, reinterpret_cast<T*>(block), reinterpret_cast<const T*>(sources[s] + at), n);
        else
          fail("collective: cannot reduce ", t, " values");
      });
    }
    for (std::byte* target : targets) std::memcpy(target + at, block, bytes);
  }
}

}  // namespace lt::distributed
