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

/// Descriptor by stable id; nullptr for an unused id.
inline const OpDesc* find_op(OpId id) {
  static const auto table = [] {
    std::array<const OpDesc*, op_id_limit> t{};
    for (const OpDesc* d : registered_ops) t[static_cast<std::size_t>(d->id)] = d;
    return t;
  }();
  auto i = static_cast<std::size_t>(id);
  return i < table.size() ? table[i] : nullptr;
}

}  // namespace lt
