#pragma once
// The reference executor: runs a step graph node by node with the op table's kernels. It is
// the oracle that faster executors are tested against.
#include <span>
#include <vector>

#include "lazytensor/ops/execute.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/runtime/fault_site.hpp"

namespace lt {

/// Runs a schedule node by node; returns one value per root. Intermediates are freed as soon
/// as their last reader has run. `made`, when given, sees each value an op makes, with its
/// position, before anything reads it.
inline std::vector<Array> run_schedule(Schedule s, void (*made)(const Schedule& s, int position, const Array& value) = nullptr) {
  std::vector<Array> values(s.order.size());
  std::vector<Array> args;
  for (std::size_t k = 0; k < s.order.size(); ++k) {
    const Node& n = *s.order[k];
    if (n.is_data()) {
      values[k] = n.leaf().data;
      continue;
    }
    args.clear();
    for (int p : s.inputs[k]) args.push_back(values[static_cast<std::size_t>(p)]);
    try {
      values[k] = execute_op(*n.op, args, n.attrs, n.meta);
    } catch (const Error&) {
      detail::raise_recorded_at(n);
    }
    if (made != nullptr) made(s, static_cast<int>(k), values[k]);
    for (int p : s.inputs[k])
      if (--s.uses[static_cast<std::size_t>(p)] == 0) values[static_cast<std::size_t>(p)] = {};
  }
  std::vector<Array> out;
  out.reserve(s.roots.size());
  for (int r : s.roots) out.push_back(values[static_cast<std::size_t>(r)]);
  return out;
}

/// Runs the graph below `roots` node by node: the oracle.
inline std::vector<Array> run_reference(std::span<const NodePtr> roots) { return run_schedule(make_schedule(roots)); }

}  // namespace lt
