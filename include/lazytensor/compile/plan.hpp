#pragma once
// From a step graph to a Plan: the schedule, cut into steps. The parts: the plan's data
// (plan_types.hpp), fusion groups (grouping.hpp), the arena (memory_plan.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lazytensor/compile/grouping.hpp"
#include "lazytensor/compile/memory_plan.hpp"
#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/ops/attrs_key.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt {

/// Groups the schedule's nodes and orders the steps.
inline Plan make_plan(const Schedule& s) {
  Plan plan;
  const auto n = static_cast<int>(s.order.size());
  auto idx = [](int i) { return static_cast<std::size_t>(i); };
  plan.key = s.key;
  plan.nodes.reserve(idx(n));
  plan.words.offsets.reserve(idx(n) + 1);
  std::vector<const OpDesc*> ops;  // per position; read with plan.nodes in place of the nodes
  ops.reserve(idx(n));
  // One pass over the nodes, in order, fetching ahead: a large graph's nodes are out of cache.
  // A node joins its group here, while it is in cache; the groups read earlier nodes only.
  detail::Grouper grouper(s);
  constexpr std::size_t ahead = 12;
  for (std::size_t p = 0; p < s.order.size(); ++p) {
    if (p + ahead < s.order.size()) prefetch_whole_node(s.order[p + ahead]);
    const Node* node = s.order[p];
    ops.push_back(node->op);
    // Filled in place: a PlanNode built aside and copied in is read back with wide loads over
    // the narrow stores that made it, a stall per node.
    PlanNode& made = plan.nodes.emplace_back();
    made.op = node->op->id;
    made.meta = node->meta;
    plan.value_elements += node->meta.shape.numel();
    if (!node->is_data()) append_structural_words(*node->op, node->attrs, plan.words.flat);
    plan.words.close_list();
    made.attrs_token = node->attrs_token;
    grouper.add(static_cast<int>(p));
  }
  plan.inputs = s.inputs;
  plan.roots = s.roots;
  const Adjacency consumers = s.inputs.transposed();
  std::vector<char> is_root(idx(n), 0);
  for (int r : s.roots) is_root[idx(r)] = 1;

  grouper.drop_merged();
  std::vector<int>& group_of = grouper.group_of_;
  // A group of one op gains nothing from tiles: that op runs alone.
  for (const auto& members : grouper.members_)
    if (members.size() == 1) group_of[idx(members[0])] = -1;
  plan.groups = std::move(grouper.groups_);
  detail::GroupLookup lookup(idx(n));
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (grouper.members_[g].size() > 1) detail::fill_group(s, ops, plan.nodes, plan.groups[g], grouper.members_[g], grouper.role_, lookup);

  // A value is made in full when something outside its group reads it (or it is a root).
  plan.materialized.assign(idx(n), 0);
  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    if (op.kind == OpKind::leaf) continue;
    bool inlined = detail::inline_constant(op, plan.nodes[idx(p)].meta);
    int g = group_of[idx(p)];
    bool outside_reader = is_root[idx(p)] != 0;
    // An inline constant is recomputed in the groups that read it, except by a product, which
    // reads its inputs whole.
    for (int c : consumers[idx(p)])
      outside_reader = outside_reader || (inlined ? group_of[idx(c)] < 0 || grouper.role_[idx(c)] == MemberRole::source
                                                  : group_of[idx(c)] != g);
    plan.materialized[idx(p)] = (g < 0 && !inlined) || outside_reader;
  }

  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    int g = group_of[idx(p)];
    if (op.kind == OpKind::leaf || (g < 0 && !plan.materialized[idx(p)])) continue;
    if (g >= 0 && grouper.run_at_[idx(g)] != p) continue;
    plan.steps.push_back({p, g});
    const bool view = g < 0 && op.view != nullptr &&
                      (s.inputs[idx(p)].empty() ||
                       may_alias(op, plan.nodes[idx(p)].meta.dtype, plan.nodes[idx(s.inputs[idx(p)][0])].meta.dtype));
    ++(view ? plan.stats.views : plan.stats.kernels);
    if (g >= 0) {
      ++plan.stats.fused_groups;
      if (int PlanStats::*count = kind_info(plan.groups[idx(g)].kind).count) ++(plan.stats.*count);
      plan.stats.fused_ops += static_cast<int>(grouper.members_[idx(g)].size());
    }
  }
  detail::plan_arena(plan, s, ops, group_of, consumers);
  for (int p = 0; p < n; ++p) {
    const Meta& meta = plan.nodes[idx(p)].meta;
    const bool view = ops[idx(p)]->view != nullptr &&
                      (s.inputs[idx(p)].empty() ||
                       may_alias(*ops[idx(p)], meta.dtype, plan.nodes[idx(s.inputs[idx(p)][0])].meta.dtype));
    if (plan.materialized[idx(p)] && !is_root[idx(p)] && !view)
      plan.stats.intermediate_bytes += meta.shape.numel() * static_cast<std::int64_t>(itemsize(meta.dtype));
  }
  return plan;
}

/// Plans the graph of `roots`.
inline Plan make_plan(std::span<const NodePtr> roots) { return make_plan(make_schedule(roots)); }

/// The first position at which graph `s` differs from the graph `plan` was compiled for, or
/// -1 when `s` fits the plan. Data leaves match on shape and dtype; the rest also on op,
/// attribute structure and inputs.
inline int first_difference(const Plan& plan, const Schedule& s) {
  // Attributes of the compiled node's token have its structure; others are walked.
  auto same_attrs = [&](std::size_t p, const Node& node) {
    const std::uint64_t token = plan.nodes[p].attrs_token;
    return (token != 0 && node.attrs_token == token) || same_structure(*node.op, node.attrs, plan.words[p]);
  };
  const std::size_t n = std::min(plan.nodes.size(), s.order.size());
  for (std::size_t p = 0; p < n; ++p) {
    const Node& node = *s.order[p];
    const PlanNode& want = plan.nodes[p];
    if (node.op->id != want.op || node.meta.shape != want.meta.shape || node.meta.dtype != want.meta.dtype ||
        node.meta.wrapped_number != want.meta.wrapped_number || !std::ranges::equal(s.inputs[p], plan.inputs[p]) ||
        (!node.is_data() && !same_attrs(p, node)))
      return static_cast<int>(p);
  }
  if (plan.nodes.size() != s.order.size()) return static_cast<int>(n);
  return s.roots == plan.roots ? -1 : static_cast<int>(n == 0 ? 0 : n - 1);
}

}  // namespace lt
