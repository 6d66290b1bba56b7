#pragma once
// The kinds of fusion group, each declared once: what leads it, which members it takes, how a
// plan check knows it, how dumps name it, which plan statistic counts it and the tile its runner
// takes. Grouping forms the groups (grouping.hpp) and the row loop runs every kind
// (runtime/row_loop.hpp), taking its tiles from rows of the index space or from the member that
// leads it (runtime/row_loop_sources.hpp). A new kind is a line here, the rule that forms it in
// grouping.hpp and, where it has a leader, the leader's source of tiles.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "lazytensor/compile/plan_stats.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/tiled_product.hpp"

namespace lt {

/// A fusion group's kind (stored in plan files: append new kinds).
enum class GroupKind : std::uint8_t {
  map,      // elementwise ops over one index space
  rows,     // reductions of trailing dims, with their producers and consumers
  product,  // a tiled contraction and the elementwise ops over its output (its epilogue)
};

struct GroupKindInfo {
  std::string_view name;   // in plan dumps
  std::string_view tiles;  // what the group runs on, in plan dumps
  int PlanStats::*count;   // the statistic counting groups of the kind, or nullptr
  /// Whether an op (as the running kernel level has it) leads a group of this kind, as its first
  /// member (MemberRole::source) whose output tiles the others run on, for these operands;
  /// nullptr for kinds whose tiles are rows of their index space.
  bool (*leads)(const OpDesc& op, std::span<const Meta> in, const Meta& out);
  OpKind leader_kind;  // with `leads`: the kind of op that may lead, asked first (`leads` needs the operands)
  /// Whether the group reduces rows: its row is its reduced trailing dims, and members may make
  /// one value per row. Otherwise its row is one element.
  bool reduces;
  /// Elements per tile of the row loop (runtime/row_loop_class.hpp says why each is so).
  std::int64_t tile_elements;
};

/// The most operands an op leading a group may have (a plan check bounds it).
inline constexpr std::size_t max_source_inputs = 4;

namespace detail {
/// A contraction that hands its output over tile by tile (ops/tiled_product.hpp).
inline bool leads_product(const OpDesc& op, std::span<const Meta> in, const Meta& out) {
  return op.kind == OpKind::contraction && op.tiled != nullptr && out.shape.rank() > 0 && out.shape.numel() > 0 &&
         in.size() <= max_source_inputs && op.tiled->fits(in, out);
}
}  // namespace detail

inline constexpr std::array<GroupKindInfo, 3> group_kinds = {{
    {"map", "tiles of elements", nullptr, nullptr, OpKind::elementwise, false, 384},
    {"rows", "tiles of whole rows", &PlanStats::row_groups, nullptr, OpKind::reduction, true, 8192},
    {"product", "on the product's tiles", &PlanStats::gemm_epilogues, &detail::leads_product, OpKind::contraction, false, 2048},
}};

inline const GroupKindInfo& kind_info(GroupKind k) { return group_kinds[static_cast<std::size_t>(k)]; }

}  // namespace lt
