#pragma once
// How many Philox blocks a random creation op's call draws: the tracer reserves that many from
// the generator.
#include <cstddef>
#include <cstdint>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::creation {

/// How many elements of `op` with dtype t one Philox block gives.
inline std::int64_t elements_per_block(const OpDesc& op, DType t) {
  return op.id == OpId::rand && (t == DType::f32 || t == DType::f16) ? 4 : 2;
}

/// The number of Philox blocks a call of `op` producing `out` draws.
inline std::int64_t blocks_drawn(const OpDesc& op, const Meta& out) {
  std::int64_t per = elements_per_block(op, out.dtype);
  return (out.shape.numel() + per - 1) / per;
}

}  // namespace lt::creation
