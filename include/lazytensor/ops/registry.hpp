#pragma once
// The op registry: every descriptor of the op table, found by id. Passes and tests walk it.
#include <array>

#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/unary.hpp"

namespace lt {

#define LT_REGISTER_OP(group, descriptor, ...) &group::descriptor,
#define LT_REGISTER_UNARY(name, ...) &unary::name,
#define LT_REGISTER_BINARY(name, ...) &binary::name,
/// Every op of the table.
inline constexpr std::array registered_ops = std::to_array<const OpDesc*>(
    {LT_OP_TABLE(LT_REGISTER_OP) LT_UNARY_TABLE(LT_REGISTER_UNARY) LT_BINARY_TABLE(LT_REGISTER_BINARY)
         LT_TERNARY_TABLE(LT_REGISTER_BINARY)});
#undef LT_REGISTER_OP
#undef LT_REGISTER_UNARY
#undef LT_REGISTER_BINARY

namespace detail {
// Indexed by the ids the table states, not by reading the descriptors: those are defined in
// the implementation's translation unit, whose dynamic initialisation may come after a caller
// in another unit's (a program's static objects), so a table filled from `d->id` then would
// hold zeros for ever.
#define LT_INDEX_OP(group, descriptor, name, id) t[id] = &group::descriptor;
#define LT_INDEX_UNARY(name, id, ...) t[id] = &unary::name;
#define LT_INDEX_BINARY(name, id, ...) t[id] = &binary::name;
inline constexpr std::array<const OpDesc*, op_id_limit> ops_by_id = [] {
  std::array<const OpDesc*, op_id_limit> t{};
  LT_OP_TABLE(LT_INDEX_OP)
  LT_UNARY_TABLE(LT_INDEX_UNARY) LT_BINARY_TABLE(LT_INDEX_BINARY) LT_TERNARY_TABLE(LT_INDEX_BINARY)
  return t;
}();
#undef LT_INDEX_OP
#undef LT_INDEX_UNARY
#undef LT_INDEX_BINARY
}  // namespace detail

/// Descriptor by stable id; nullptr for an unused id. Safe during static initialisation.
constexpr const OpDesc* find_op(OpId id) {
  const auto i = static_cast<std::size_t>(id);
  return i < detail::ops_by_id.size() ? detail::ops_by_id[i] : nullptr;
}

}  // namespace lt
