#pragma once
// Placing a step's intermediate values in one arena: each value lives from the step that makes
// it to the last step that reads it, and values whose lives do not overlap share bytes. A
// value may also take over the bytes of an input whose life ends where it is made (in place),
// when its kernel reads each element before writing the same element.
#include <cstdint>
#include <span>
#include <vector>

namespace lt {

/// One value to place: alive in steps [birth, death], both inclusive.
struct ArenaValue {
  int birth, death;
  std::int64_t bytes;
  int in_place_of = -1;  // index of a value dying at `birth` whose bytes it may take, or -1
};

struct ArenaLayout {
  std::vector<std::int64_t> offsets;  // per value
  std::int64_t bytes = 0;             // the arena's size
};

inline constexpr std::int64_t arena_alignment = 64;

/// First fit over a free list, values taken in birth order. `values` must be sorted by birth.
inline ArenaLayout place_in_arena(std::span<const ArenaValue> values) {
  struct Range {
    std::int64_t offset, bytes;
  };
  ArenaLayout layout;
  layout.offsets.assign(values.size(), -1);
  std::vector<Range> free;  // sorted by offset, coalesced
  std::int64_t top = 0;
  auto release = [&](std::int64_t offset, std::int64_t bytes) {
    auto it = free.begin();
    while (it != free.end() && it->offset < offset) ++it;
    it = free.insert(it, {offset, bytes});
    if (auto next = it + 1; next != free.end() && it->offset + it->bytes == next->offset) {
      it->bytes += next->bytes;
      free.erase(next);
    }
    if (it != free.begin()) {
      auto prev = it - 1;
      if (prev->offset + prev->bytes == it->offset) {
        prev->bytes += it->bytes;
        it = free.erase(it) - 1;
      }
    }
    if (it->offset + it->bytes == top) {  // the end of the arena shrinks back
      top = it->offset;
      free.erase(it);
    }
  };
  auto take = [&](std::int64_t bytes) {
    for (auto it = free.begin(); it != free.end(); ++it)
      if (it->bytes >= bytes) {
        std::int64_t offset = it->offset;
        it->offset += bytes;
        it->bytes -= bytes;
        if (it->bytes == 0) free.erase(it);
        return offset;
      }
    std::int64_t offset = top;
    top += bytes;
    return offset;
  };

  // Deaths pending release, by step: released once the step after their death begins.
  std::vector<std::size_t> live;
  std::vector<char> handed_over(values.size(), 0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    const ArenaValue& v = values[k];
    const std::int64_t bytes = (v.bytes + arena_alignment - 1) / arena_alignment * arena_alignment;
    for (std::size_t i = 0; i < live.size();) {
      const ArenaValue& l = values[live[i]];
      if (l.death < v.birth) {
        if (!handed_over[live[i]]) release(layout.offsets[live[i]], (l.bytes + arena_alignment - 1) / arena_alignment * arena_alignment);
        live[i] = live.back();
        live.pop_back();
      } else {
        ++i;
      }
    }
    const int donor = v.in_place_of;
    if (donor >= 0 && !handed_over[static_cast<std::size_t>(donor)] && values[static_cast<std::size_t>(donor)].death == v.birth &&
        (values[static_cast<std::size_t>(donor)].bytes + arena_alignment - 1) / arena_alignment * arena_alignment == bytes) {
      // The donor's bytes pass to this value, which releases them when it dies.
      layout.offsets[k] = layout.offsets[static_cast<std::size_t>(donor)];
      handed_over[static_cast<std::size_t>(donor)] = 1;
    } else {
      layout.offsets[k] = take(bytes);
    }
    live.push_back(k);
    if (top > layout.bytes) layout.bytes = top;
  }
  return layout;
}

}  // namespace lt
