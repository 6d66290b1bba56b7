#pragma once
// The order in which a step graph runs, and how many readers each value has.
#include <span>
#include <unordered_map>
#include <vector>

#include "lazytensor/trace/node.hpp"
#include "lazytensor/trace/pending.hpp"

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
  for (const NodePtr& root : roots) {
    append_topological(root.get(), s.order, position);
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
  // A pending leaf's value comes from a queued step: the graph runs once that step has run.
  for (const Node* n : s.order)
    if (n->step) await_value(*n);
  return s;
}

}  // namespace lt
