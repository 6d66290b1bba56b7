#pragma once
// Where the random creation ops keep their seed and offset, and how many Philox blocks a call
// draws: the tracer reserves that many from the generator.
#include <cstddef>
#include <cstdint>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::creation {

inline constexpr std::size_t seed_slot = 1, offset_slot = 2;

/// How many elements of `op` with dtype t one Philox block gives.
inline std::int64_t elements_per_block(const OpDesc& op, DType t) {
  return op.id == OpId::rand && t == DType::f32 ? 4 : 2;
}

/// The number of Philox blocks a call of `op` producing `out` draws.
inline std::int64_t blocks_drawn(const OpDesc& op, const Meta& out) {
  std::int64_t per = elements_per_block(op, out.dtype);
  return (out.shape.numel() + per - 1) / per;
}

}  // namespace lt::creation
