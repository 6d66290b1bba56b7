#pragma once
// The op registry: every descriptor, found by id. Passes and tests walk it.
#include <array>
#include <span>

#include "lazytensor/ops/binary.hpp"
#include "lazytensor/ops/contraction.hpp"
#include "lazytensor/ops/creation.hpp"
#include "lazytensor/ops/indexing.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/ops/movement.hpp"
#include "lazytensor/ops/pool.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/ops/unary.hpp"

namespace lt {

namespace detail {
template <std::size_t... N>
constexpr auto join_ops(const std::array<const OpDesc*, N>&... groups) {
  std::array<const OpDesc*, (N + ...)> all{};
  std::size_t k = 0;
  ((std::copy(groups.begin(), groups.end(), all.begin() + k), k += N), ...);
  return all;
}
}  // namespace detail

/// Every registered op, grouped as in ops/.
inline constexpr auto registered_ops = detail::join_ops(leaf::all, creation::all, unary::all, binary::all,
                                                        reduction::all, movement::all, indexing::all,
                                                        contraction::all, pool::all);

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
