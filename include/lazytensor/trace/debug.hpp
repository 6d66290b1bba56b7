#pragma once
// Debug views of the pending graph: lt::debug::ir_text and lt::debug::ir_dot.
#include <sstream>
#include <string>
#include <vector>

#include "lazytensor/expr/fragment_attrs.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::debug {

namespace detail {
/// Nodes below the tensors' values, producers first, each numbered once.
inline std::vector<const Node*> topo_nodes(const std::vector<Tensor>& tensors,
                                           NodeIndex& number) {
  std::vector<const Node*> order;
  for (const Tensor& t : tensors) append_topological(t.impl().node.get(), order, number);
  return order;
}

/// The words of `a`: its ints, then its data ints, then its floats, each list after a "; ".
inline std::string attrs_text(const Attrs& a) {
  std::ostringstream os;
  const char* between = "";
  auto list = [&](const auto& words) {
    if (words.empty()) return;
    os << between;
    for (std::size_t k = 0; k < words.size(); ++k) os << (k ? ", " : "") << words[k];
    between = "; ";
  };
  list(a.ints);
  list(a.values);
  list(a.floats);
  return os.str();
}
/// A fragment's body as one nested expression over its inputs: add(mul(%0, %1), 0.5).
std::string fragment_text(const Node& n, const NodeIndex& number);
/// One node as ir_text writes it, its inputs numbered by `number`: "%3 = add(%1, %2) f32[2, 2]".
std::string node_text(const Node& n, const NodeIndex& number);
/// ", recorded at train.cpp:42" for a node whose line is known, else nothing: for messages.
inline std::string recorded_at(const Node& n) {
  return known(n.site) ? ", recorded at " + site_text(n.site) : std::string();
}
}  // namespace detail

/// The graph that computes `tensors`, one node per line, each with the line that recorded it:
///   %2 = add(%0, %1) f32[2, 2]  # examples/train.cpp:41
///   %3 = fragment{mul(relu(add(%0, %1)), 0.5)} f32[2, 2]  # examples/train.cpp:42
/// Computed values appear as device_data leaves (no line); eager tensors have no graph and are
/// skipped.
std::string ir_text(const std::vector<Tensor>& tensors);

/// The same graph in Graphviz DOT, each node labelled with its op, type and line.
std::string ir_dot(const std::vector<Tensor>& tensors);

}  // namespace lt::debug
