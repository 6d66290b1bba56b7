#pragma once
// How the profiler names one step of a plan (a fusion group, or a node run alone) and what it
// notes of it: its ops, its shape, the bytes it reads and writes in memory, and its FLOPs where
// the op kinds tell them. Worked out while a recording is under way, once per plan step.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/runtime/profiler_events.hpp"

namespace lt::detail {

inline std::int64_t value_bytes(const Meta& m) { return m.shape.numel() * static_cast<std::int64_t>(itemsize(m.dtype)); }

/// Floating-point operations of node `n` with inputs `in`, or -1 where its kind does not say.
/// Elementwise: one per result; a reduction: one per element read; a contraction of
/// [..., M, K] by [..., K, N]: a multiply and an add per result and K.
inline std::int64_t node_flops(const Node& n) {
  switch (n.op->kind) {
    case OpKind::elementwise:
      return n.meta.shape.numel();
    case OpKind::reduction:
      return n.inputs.empty() ? -1 : n.inputs[0]->meta.shape.numel();
    case OpKind::contraction: {
      if (n.inputs.size() < 2) return -1;
      const Shape& a = n.inputs[0]->meta.shape;
      const Shape& b = n.inputs[1]->meta.shape;
      if (a.rank() < 2 || b.rank() < 2 || a[a.rank() - 1] != b[b.rank() - 2]) return -1;
      return 2 * n.meta.shape.numel() * a[a.rank() - 1];
    }
    default:
      return 0;  // data, creation, movement, collectives: no arithmetic counted
  }
}

inline std::string shape_text(const Meta& m) { return concat(name(m.dtype), m.shape); }

/// The name, category and arguments of the profiler's spans of plan step `step` of graph `s`:
/// its ops, shape, bytes and FLOPs. The same for every graph that fits the plan.
inline std::shared_ptr<const profiler::detail::SpanNote> kernel_note(const Plan& plan, const Schedule& s, const PlanStep& step) {
  auto note = std::make_shared<profiler::detail::SpanNote>();
  note->category = "kernel";
  auto arg = [&](std::string key, std::string text) { note->args.push_back({std::move(key), std::move(text), 0, false}); };
  auto number = [&](std::string key, double value) { note->args.push_back({std::move(key), {}, value, true}); };
  auto node_at = [&](int p) -> const Node& { return *s.order[static_cast<std::size_t>(p)]; };
  std::int64_t bytes = 0, flops = 0;
  bool flops_known = true;
  auto count_flops = [&](const Node& n) {
    const std::int64_t f = node_flops(n);
    if (f < 0) flops_known = false;
    else flops += f;
  };
  std::string ops, name;
  std::vector<std::string_view> distinct;
  if (step.group < 0) {
    const Node& n = node_at(step.position);
    for (int q : s.inputs[static_cast<std::size_t>(step.position)]) bytes += value_bytes(node_at(q).meta);
    bytes += value_bytes(n.meta);
    count_flops(n);
    ops = name = std::string(n.op->name);
    if (n.op->kind == OpKind::collective) note->category = "collective";
    arg("shape", shape_text(n.meta));
  } else {
    const FusionGroup& g = plan.groups[static_cast<std::size_t>(step.group)];
    int counted = 0;
    for (const GroupMember& m : g.members) {
      if (m.role == MemberRole::constant) continue;
      const Node& n = node_at(m.position);
      ++counted;
      ops += (ops.empty() ? "" : ",") + std::string(n.op->name);
      if (std::find(distinct.begin(), distinct.end(), n.op->name) == distinct.end()) distinct.push_back(n.op->name);
      if (plan.materialized[static_cast<std::size_t>(m.position)]) bytes += value_bytes(n.meta);
      count_flops(n);
    }
    for (const GroupExternal& e : g.externals) bytes += value_bytes(node_at(e.position).meta);
    constexpr std::size_t named = 4;  // op names in a group's span name; the args list all
    for (std::size_t k = 0; k < distinct.size() && k < named; ++k) name += (k ? "+" : "") + std::string(distinct[k]);
    if (distinct.size() > named) name += "+...";
    name = concat("fused ", name, " (", counted, " ops)");
    arg("shape", shape_text(Meta{g.shape, node_at(g.members.back().position).meta.dtype, false}));
    number("row", static_cast<double>(g.row));
    arg("group kind", std::string(kind_info(g.kind).name));
  }
  note->name = std::move(name);
  arg("ops", std::move(ops));
  number("bytes", static_cast<double>(bytes));
  if (flops_known) number("flops", static_cast<double>(flops));
  return note;
}

}  // namespace lt::detail
