#pragma once
// Stable op ids, made from the op table (ops/op_table.hpp).
#include <cstddef>
#include <cstdint>

#include "lazytensor/ops/op_table.hpp"

namespace lt {

#define LT_OP_ID(group, descriptor, id, number) id = number,
#define LT_ELEMENTWISE_ID(name, number, ...) name = number,
enum class OpId : std::uint16_t {
  LT_OP_TABLE(LT_OP_ID) LT_UNARY_TABLE(LT_ELEMENTWISE_ID) LT_BINARY_TABLE(LT_ELEMENTWISE_ID)
  LT_TERNARY_TABLE(LT_ELEMENTWISE_ID)
  // fused elementwise expressions (one id for all; the body tells them apart)
  fragment = 180,
};
#undef LT_OP_ID
#undef LT_ELEMENTWISE_ID

/// One past the largest id: the size of per-op tables.
inline constexpr std::size_t op_id_limit = 192;

}  // namespace lt
