#pragma once
// The reference executor: runs a step graph node by node with the op table's kernels. It is
// the oracle that faster executors are tested against.
#include <span>
#include <unordered_map>
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt {

/// The order in which to run a graph, and when each value can be freed.
struct Schedule {
  std::vector<const Node*> order;           // producers before consumers
  std::vector<std::vector<int>> inputs;     // per step: positions of its inputs in `order`
  std::vector<int> uses;                    // per step: how many later steps read it
  std::vector<int> roots;                   // per root: its position in `order`
};

/// Topological order over everything the roots need, computed iteratively (graphs are deep).
inline Schedule make_schedule(std::span<const NodePtr> roots) {
  Schedule s;
  std::unordered_map<const Node*, int> position;
  std::vector<std::pair<const Node*, std::size_t>> stack;
  for (const NodePtr& root : roots) {
    if (!position.contains(root.get())) stack.emplace_back(root.get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        const Node* in = node->inputs[next++].get();
        if (!position.contains(in)) stack.emplace_back(in, 0);
        continue;
      }
      if (!position.contains(node)) {
        position.emplace(node, static_cast<int>(s.order.size()));
        s.order.push_back(node);
      }
      stack.pop_back();
    }
    s.roots.push_back(position.at(root.get()));
  }
  s.inputs.resize(s.order.size());
  s.uses.assign(s.order.size(), 0);
  for (std::size_t k = 0; k < s.order.size(); ++k)
    for (const NodePtr& in : s.order[k]->inputs) {
      int p = position.at(in.get());
      s.inputs[k].push_back(p);
      ++s.uses[static_cast<std::size_t>(p)];
    }
  for (int r : s.roots) ++s.uses[static_cast<std::size_t>(r)];  // roots outlive the run
  return s;
}

/// Runs the graph below `roots`; returns one value per root. Intermediates are freed as soon
/// as their last reader has run.
inline std::vector<Array> run_reference(std::span<const NodePtr> roots) {
  Schedule s;
  {
    metrics::ScopedTimer t(metrics::timer_handle("CompileTime"));
    s = make_schedule(roots);
  }
  metrics::counter_handle("UncachedCompile").add();
  metrics::ScopedTimer t(metrics::timer_handle("ExecuteTime"));
  std::vector<Array> values(s.order.size());
  std::vector<Array> args;
  for (std::size_t k = 0; k < s.order.size(); ++k) {
    const Node& n = *s.order[k];
    if (n.is_data()) {
      values[k] = n.data;
      continue;
    }
    args.clear();
    for (int p : s.inputs[k]) args.push_back(values[static_cast<std::size_t>(p)]);
    values[k] = execute_op(*n.op, args, n.attrs, n.meta);
    for (int p : s.inputs[k])
      if (--s.uses[static_cast<std::size_t>(p)] == 0) values[static_cast<std::size_t>(p)] = {};
  }
  std::vector<Array> out;
  out.reserve(s.roots.size());
  for (int r : s.roots) out.push_back(values[static_cast<std::size_t>(r)]);
  return out;
}

}  // namespace lt
