#pragma once
// The memory plan: where a plan's intermediate values sit in its one arena.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "lazytensor/compile/arena.hpp"
#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt {

namespace detail {

/// Places every intermediate in the plan's arena: values made by a kernel (not views), read
/// within the step only. A value lives until the last step that reads it or a view of it.
/// `ops`: per position, its node's op; shapes and dtypes come from plan.nodes (a large graph's
/// nodes are out of cache: each pass over them would miss on every one).
inline void plan_arena(Plan& plan, const Schedule& s, std::span<const OpDesc* const> ops, std::span<const int> group_of,
                       const Adjacency& consumers) {
  const auto n = static_cast<int>(s.order.size());
  auto idx = [](int i) { return static_cast<std::size_t>(i); };
  constexpr int forever = std::numeric_limits<int>::max();
  auto aliases = [&](int p) {
    return ops[idx(p)]->view != nullptr &&
           (s.inputs[idx(p)].empty() ||
            may_alias(*ops[idx(p)], plan.nodes[idx(p)].meta.dtype, plan.nodes[idx(s.inputs[idx(p)][0])].meta.dtype));
  };
  std::vector<int> step_of(idx(n), -1), first_member_step(plan.groups.size(), -1);
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].group >= 0) first_member_step[idx(plan.steps[i].group)] = static_cast<int>(i);
    else step_of[idx(plan.steps[i].position)] = static_cast<int>(i);
  }
  for (int p = 0; p < n; ++p)
    if (group_of[idx(p)] >= 0) step_of[idx(p)] = first_member_step[idx(group_of[idx(p)])];
  std::vector<int> death(idx(n), -1);
  for (int p = 0; p < n; ++p)
    for (int c : consumers[idx(p)]) death[idx(p)] = std::max(death[idx(p)], step_of[idx(c)] < 0 ? forever : step_of[idx(c)]);
  for (int r : s.roots) death[idx(r)] = forever;
  for (int p = n - 1; p >= 0; --p)  // a view keeps what it views alive
    if (aliases(p) && !s.inputs[idx(p)].empty()) {
      int q = s.inputs[idx(p)][0];
      death[idx(q)] = std::max(death[idx(q)], death[idx(p)]);
    }

  std::vector<ArenaValue> values;
  std::vector<int> position_of;
  std::vector<int> value_of(idx(n), -1);
  std::vector<int> placed;  // positions by the step that makes them, schedule order within one
  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    if (step_of[idx(p)] >= 0 && plan.materialized[idx(p)] && op.kind != OpKind::leaf && !aliases(p) &&
        death[idx(p)] != forever && plan.nodes[idx(p)].meta.shape.numel() > 0)
      placed.push_back(p);
  }
  std::stable_sort(placed.begin(), placed.end(), [&](int a, int b) { return step_of[idx(a)] < step_of[idx(b)]; });
  for (int p : placed) {
      const Meta& meta = plan.nodes[idx(p)].meta;
      const int i = step_of[idx(p)];
      ArenaValue v{i, std::max(death[idx(p)], i), meta.shape.numel() * static_cast<std::int64_t>(itemsize(meta.dtype))};
      // An elementwise op run alone reads each element before it writes that element: it may
      // write over an input of its own shape and dtype that it is the last to read.
      if (group_of[idx(p)] < 0 && ops[idx(p)]->kind == OpKind::elementwise)
        for (int q : s.inputs[idx(p)])
          if (value_of[idx(q)] >= 0 && death[idx(q)] == i && plan.nodes[idx(q)].meta.shape == meta.shape &&
              plan.nodes[idx(q)].meta.dtype == meta.dtype)
            v.in_place_of = value_of[idx(q)];
      value_of[idx(p)] = static_cast<int>(values.size());
      values.push_back(v);
      position_of.push_back(p);
    }
  ArenaLayout layout = place_in_arena(values);
  plan.arena_offset.assign(idx(n), -1);
  for (std::size_t k = 0; k < values.size(); ++k) plan.arena_offset[idx(position_of[k])] = layout.offsets[k];
  plan.stats.arena_bytes = layout.bytes;
}

}  // namespace detail

}  // namespace lt
