#pragma once
// lt::debug::plan_text and plan_dot (runtime/plan_dump.hpp), defined: included once per
// program, by the implementation (lazytensor/implementation.hpp), never by a file of its own.
#include <sstream>
#include <string>
#include <vector>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/runtime/barrier.hpp"
#include "lazytensor/runtime/plan_dump.hpp"
#include "lazytensor/trace/debug.hpp"

namespace lt::debug::detail {

/// A pending graph's schedule and plan, the graph's nodes numbered by schedule position.
struct DumpedPlan {
  std::vector<NodePtr> roots;
  Schedule schedule;
  Plan plan;
  NodeIndex number;
};

inline DumpedPlan dumped_plan(const std::vector<Tensor>& tensors) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : tensors)
    if (t.defined() && t.device().is_lazy() && !t.impl().node->is_data()) {
      roots.push_back(t.impl().node);
      lt::detail::wait_for_device(t.device());
    }
  roots = without_failed_leaves(roots);
  DumpedPlan d{roots, make_schedule(roots), {}, {}};
  d.plan = make_plan(d.schedule);
  for (std::size_t p = 0; p < d.schedule.order.size(); ++p) d.number.emplace(d.schedule.order[p], static_cast<int>(p));
  return d;
}

/// Where the value at position `p` lives while the step runs.
inline std::string value_home(const DumpedPlan& d, int p) {
  const auto at = static_cast<std::size_t>(p);
  const Node& n = *d.schedule.order[at];
  if (n.is_data()) return "input";
  for (std::size_t r = 0; r < d.schedule.roots.size(); ++r)
    if (d.schedule.roots[r] == p) return lt::detail::concat("result ", r);
  if (!d.plan.materialized[at]) return "scratch tile";
  if (d.plan.arena_offset[at] >= 0)
    return lt::detail::concat("arena @", d.plan.arena_offset[at], " (", lt::detail::value_bytes(n.meta), " B)");
  return n.op->view != nullptr ? "view of its input" : "own buffer";
}

inline std::string node_text(const DumpedPlan& d, const Node& n) { return node_text(n, d.number); }
/// "  # train.cpp:42": the line that recorded `n`, after what a dump says of it (else nothing).
inline std::string site_note(const Node& n) { return known(n.site) ? "  # " + site_text(n.site) : std::string(); }

inline std::string_view role_text(MemberRole r, GroupKind kind) {
  switch (r) {
    case MemberRole::full: return "per element";
    case MemberRole::row: return "per row";
    case MemberRole::constant: return "constant";
    case MemberRole::source: return kind_info(kind).name;
  }
  return "";
}

}  // namespace lt::debug::detail

namespace lt::debug {

std::string plan_text(const std::vector<Tensor>& tensors) {
  const detail::DumpedPlan d = detail::dumped_plan(tensors);
  const Plan& plan = d.plan;
  auto node_at = [&](int p) -> const Node& { return *d.schedule.order[static_cast<std::size_t>(p)]; };
  std::ostringstream os;
  os << "plan: " << d.schedule.order.size() << " nodes, " << plan.stats.kernels << " kernels (" << plan.stats.fused_groups
     << " fused groups, " << plan.stats.views << " views), arena " << plan.stats.arena_bytes << " B\n";
  for (std::size_t p = 0; p < d.schedule.order.size(); ++p)
    if (d.schedule.order[p]->is_data()) os << "  " << detail::node_text(d, *d.schedule.order[p]) << "  -> input\n";
  int k = 0;
  for (const PlanStep& step : plan.steps) {
    if (step.group < 0) {
      const Node& n = node_at(step.position);
      os << (n.op->view != nullptr ? "view " : "kernel ") << ++k << ": " << detail::node_text(d, n) << "  -> "
         << detail::value_home(d, step.position) << detail::site_note(n) << "\n";
      continue;
    }
    const FusionGroup& g = plan.groups[static_cast<std::size_t>(step.group)];
    os << "kernel " << ++k << ": fused group of " << g.members.size() << " ops over " << g.shape;
    os << " (" << kind_info(g.kind).name << ": " << kind_info(g.kind).tiles;
    if (g.row > 1) os << " of " << g.row;
    os << ")";
    os << "\n";
    for (const GroupMember& m : g.members)
      os << "    " << detail::node_text(d, node_at(m.position)) << "  [" << detail::role_text(m.role, g.kind) << "] -> "
         << detail::value_home(d, m.position) << detail::site_note(node_at(m.position)) << "\n";
    if (!g.externals.empty()) {
      os << "    reads";
      for (const GroupExternal& e : g.externals)
        os << " %" << e.position << " (" << detail::value_home(d, e.position) << ")";
      os << "\n";
    }
  }
  return os.str();
}

std::string plan_dot(const std::vector<Tensor>& tensors) {
  const detail::DumpedPlan d = detail::dumped_plan(tensors);
  auto label = [&](int p) {
    const Node& n = *d.schedule.order[static_cast<std::size_t>(p)];
    std::string text = detail::node_text(d, n) + "\\n" + detail::value_home(d, p);
    if (known(n.site)) text += "\\n" + site_text(n.site);
    std::string escaped;
    for (char c : text) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    return escaped;
  };
  std::ostringstream os;
  os << "digraph plan {\n  node [shape=box];\n";
  std::vector<char> drawn(d.schedule.order.size(), 0);
  int k = 0;
  for (const PlanStep& step : d.plan.steps) {
    os << "  subgraph cluster_" << k << " {\n    label=\"kernel " << k + 1 << "\";\n";
    ++k;
    if (step.group < 0) {
      os << "    n" << step.position << " [label=\"" << label(step.position) << "\"];\n";
      drawn[static_cast<std::size_t>(step.position)] = 1;
    } else {
      for (const GroupMember& m : d.plan.groups[static_cast<std::size_t>(step.group)].members) {
        os << "    n" << m.position << " [label=\"" << label(m.position) << "\"];\n";
        drawn[static_cast<std::size_t>(m.position)] = 1;
      }
    }
    os << "  }\n";
  }
  for (std::size_t p = 0; p < d.schedule.order.size(); ++p) {
    if (!drawn[p]) os << "  n" << p << " [label=\"" << label(static_cast<int>(p)) << "\", style=dashed];\n";
    for (int q : d.schedule.inputs[p]) os << "  n" << q << " -> n" << p << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace lt::debug
