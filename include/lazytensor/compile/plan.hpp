#pragma once
// From a step graph to a Plan: the schedule, cut into steps. Elementwise nodes of one shape
// (fragments included) form fusion groups, which run as one kernel over cache-sized tiles:
// the values they pass to one another live in tile buffers and never in memory. Grouping looks
// at op kinds and descriptor traits only, never at a particular op.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "lazytensor/compile/schedule.hpp"

namespace lt {

/// A node run inside a fusion group, on tile-sized views.
struct GroupMember {
  int position;             // in schedule order
  bool scalar;              // a zero-dim constant (a C++ scalar operand): one element per tile
  std::vector<int> inputs;  // per input: >= 0 a member index; < 0 external number -1 - k
};

struct FusionGroup {
  Shape shape;  // the index space of every full-size member
  std::vector<GroupMember> members;
  std::vector<int> externals;  // schedule positions of the values it reads from outside
};

struct PlanStep {
  int position;    // the node, or the group's first member
  int group = -1;  // < 0: the node runs alone
};

/// What a plan does, for tests and metrics.
struct PlanStats {
  int kernels = 0;        // kernel launches per run: groups and nodes run alone
  int fused_groups = 0;   // groups of two or more full-size ops
  int fused_ops = 0;      // full-size ops inside those groups
  std::int64_t intermediate_bytes = 0;  // full-size values made and consumed within the step
};

struct Plan {
  Schedule schedule;
  std::vector<PlanStep> steps;
  std::vector<FusionGroup> groups;
  std::vector<char> materialized;  // per position: the value is made as a full array
  PlanStats stats;
};

namespace detail {
inline bool fusible(const Node& n) {
  return n.op->kind == OpKind::elementwise && n.op->view == nullptr && n.meta.shape.rank() > 0 &&
         n.meta.shape.numel() > 0;
}
/// A constant made from attributes alone and holding one value: cheaper to recompute per tile.
inline bool inline_constant(const Node& n) {
  return n.op->kind == OpKind::creation && n.op->arity == 0 && n.meta.shape.rank() == 0;
}
}  // namespace detail

/// Groups the schedule of `roots` and orders the steps.
inline Plan make_plan(std::span<const NodePtr> roots) {
  Plan plan;
  plan.schedule = make_schedule(roots);
  const Schedule& s = plan.schedule;
  const auto n = static_cast<int>(s.order.size());
  std::vector<int> group_of(static_cast<std::size_t>(n), -1), first(0);
  std::vector<std::vector<int>> consumers(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p)
    for (int q : s.inputs[static_cast<std::size_t>(p)]) consumers[static_cast<std::size_t>(q)].push_back(p);
  std::vector<char> is_root(static_cast<std::size_t>(n), 0);
  for (int r : s.roots) is_root[static_cast<std::size_t>(r)] = 1;

  // A node joins its first input's group when that group has its shape and every other input
  // comes from the group, from before it (so cannot depend on it), or is device data or an
  // inline constant (which depend on nothing).
  std::vector<std::vector<int>> full_members;
  for (int p = 0; p < n; ++p) {
    const Node& node = *s.order[static_cast<std::size_t>(p)];
    if (!detail::fusible(node)) continue;
    const auto& ins = s.inputs[static_cast<std::size_t>(p)];
    int g = -1;
    for (int q : ins) {
      int cand = group_of[static_cast<std::size_t>(q)];
      if (cand >= 0 && plan.groups[static_cast<std::size_t>(cand)].shape == node.meta.shape) {
        g = cand;
        break;
      }
    }
    if (g >= 0)
      for (int q : ins) {
        const Node& in = *s.order[static_cast<std::size_t>(q)];
        if (group_of[static_cast<std::size_t>(q)] != g && q >= first[static_cast<std::size_t>(g)] && !in.is_data() &&
            !detail::inline_constant(in))
          g = -1;
      }
    if (g < 0) {
      g = static_cast<int>(plan.groups.size());
      plan.groups.push_back({node.meta.shape, {}, {}});
      first.push_back(p);
      full_members.emplace_back();
    }
    group_of[static_cast<std::size_t>(p)] = g;
    full_members[static_cast<std::size_t>(g)].push_back(p);
  }
  // A group of one op gains nothing from tiles: that op runs alone.
  for (auto& members : full_members)
    if (members.size() == 1) group_of[static_cast<std::size_t>(members[0])] = -1;

  // Members in schedule order, with the inline constants they read, and their externals.
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    if (full_members[g].size() < 2) continue;
    FusionGroup& group = plan.groups[g];
    std::vector<int> member_at;  // parallel to group.members: positions
    auto member_index = [&](int q) {
      auto it = std::find(member_at.begin(), member_at.end(), q);
      return it == member_at.end() ? -1 : static_cast<int>(it - member_at.begin());
    };
    auto external_index = [&](int q) {
      auto it = std::find(group.externals.begin(), group.externals.end(), q);
      if (it != group.externals.end()) return static_cast<int>(it - group.externals.begin());
      group.externals.push_back(q);
      return static_cast<int>(group.externals.size()) - 1;
    };
    for (int p : full_members[g]) {
      GroupMember m{p, false, {}};
      for (int q : s.inputs[static_cast<std::size_t>(p)]) {
        int k = member_index(q);
        if (k < 0 && detail::inline_constant(*s.order[static_cast<std::size_t>(q)])) {
          group.members.push_back({q, true, {}});
          member_at.push_back(q);
          k = static_cast<int>(member_at.size()) - 1;
        }
        m.inputs.push_back(k >= 0 ? k : -1 - external_index(q));
      }
      group.members.push_back(std::move(m));
      member_at.push_back(p);
    }
  }

  // A value is made in full when something outside its group reads it (or it is a root).
  plan.materialized.assign(static_cast<std::size_t>(n), 0);
  for (int p = 0; p < n; ++p) {
    const Node& node = *s.order[static_cast<std::size_t>(p)];
    if (node.is_data()) continue;
    bool inlined = detail::inline_constant(node);
    int g = group_of[static_cast<std::size_t>(p)];
    bool outside_reader = is_root[static_cast<std::size_t>(p)] != 0;
    for (int c : consumers[static_cast<std::size_t>(p)])
      outside_reader = outside_reader || (inlined ? group_of[static_cast<std::size_t>(c)] < 0 : group_of[static_cast<std::size_t>(c)] != g);
    plan.materialized[static_cast<std::size_t>(p)] = (g < 0 && !inlined) || outside_reader;
  }

  for (int p = 0; p < n; ++p) {
    const Node& node = *s.order[static_cast<std::size_t>(p)];
    int g = group_of[static_cast<std::size_t>(p)];
    if (node.is_data() || (g < 0 && !plan.materialized[static_cast<std::size_t>(p)])) continue;
    if (g >= 0 && first[static_cast<std::size_t>(g)] != p) continue;
    plan.steps.push_back({p, g});
    ++plan.stats.kernels;
    if (g >= 0) {
      ++plan.stats.fused_groups;
      plan.stats.fused_ops += static_cast<int>(full_members[static_cast<std::size_t>(g)].size());
    }
  }
  for (int p = 0; p < n; ++p)
    if (plan.materialized[static_cast<std::size_t>(p)] && !is_root[static_cast<std::size_t>(p)])
      plan.stats.intermediate_bytes +=
          s.order[static_cast<std::size_t>(p)]->meta.shape.numel() * static_cast<std::int64_t>(itemsize(s.order[static_cast<std::size_t>(p)]->meta.dtype));
  return plan;
}

}  // namespace lt
