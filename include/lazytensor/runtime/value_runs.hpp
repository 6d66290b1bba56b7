#pragma once
// Runs of raw values: filled with one value, converted to another dtype; and the array a plan
// step writes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/core/array.hpp"
#include "lazytensor/core/buffer.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/shape.hpp"
#include "lazytensor/ops/kernels/convert.hpp"

namespace lt::detail {

/// `count` copies of the `size`-byte value at `value`.
inline void fill_values(std::byte* dst, const std::byte* value, std::size_t size, std::int64_t count) {
  auto fill = [&]<class U>(Tag<U>) {
    U v;
    std::memcpy(&v, value, sizeof v);
    std::fill_n(reinterpret_cast<U*>(dst), count, v);
  };
  switch (size) {
    case 1: return fill(Tag<std::uint8_t>{});
    case 2: return fill(Tag<std::uint16_t>{});
    case 4: return fill(Tag<std::uint32_t>{});
    default: return fill(Tag<std::uint64_t>{});
  }
}

/// n values at `from` (dtype `t`) as dtype `to`, converted as kernels convert operands.
/// Both places are aligned to their dtypes (arena, scratch and rows of them are).
inline void convert_values(DType t, const std::byte* from, DType to, std::byte* dst, std::int64_t n) {
  visit_storage(t, [&]<class T>(Tag<T>) {
    visit_storage(to, [&]<class U>(Tag<U>) {
      U* d = reinterpret_cast<U*>(dst);
      if constexpr (std::is_same_v<T, bool>) {
        // Read as bytes: a loop that converts bools one at a time does not vectorise.
        const auto* b = reinterpret_cast<const std::uint8_t*>(from);
        for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<U>(b[i] != 0);
      } else {
        kernels::convert_run(reinterpret_cast<const T*>(from), d, n);
      }
    });
  });
}

/// The array a plan step writes for position p: its place in the arena, or a fresh array.
inline Array output_array(const Plan& plan, const Buffer& arena, int p) {
  const Meta& m = plan.nodes[static_cast<std::size_t>(p)].meta;
  std::int64_t offset = plan.arena_offset[static_cast<std::size_t>(p)];
  if (offset < 0) return Array::empty(m.dtype, m.shape);
  return Array{arena, View{arena.data() + offset, m.dtype, m.shape, contiguous_strides(m.shape)}};
}

}  // namespace lt::detail
