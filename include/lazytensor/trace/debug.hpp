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

inline std::string attrs_text(const Attrs& a) {
  std::ostringstream os;
  for (std::size_t k = 0; k < a.ints.size(); ++k) os << (k ? ", " : "") << a.ints[k];
  if (!a.ints.empty() && !a.floats.empty()) os << "; ";
  for (std::size_t k = 0; k < a.floats.size(); ++k) os << (k ? ", " : "") << a.floats[k];
  return os.str();
}
/// A fragment's body as one nested expression over its inputs: add(mul(%0, %1), 0.5).
inline std::string fragment_text(const Node& n, const NodeIndex& number) {
  expr::FragmentAttrsReader reader(n.attrs);
  std::vector<std::string> stack;
  Attrs a;
  for (const FragmentStep& s : n.op->body) {
    if (s.op == nullptr) {
      stack.push_back("%" + std::to_string(number.at(n.inputs[static_cast<std::size_t>(reader.input_of(s.slot))].get())));
      continue;
    }
    if (s.reads_attrs) reader.next(a);
    if (s.op->arity == 0) {  // a scalar operand: {dtype, integer value}, {value}
      std::ostringstream v;
      auto t = static_cast<DType>(a.ints[0]);
      if (t == DType::f64) v << a.floats[0];
      else if (t == DType::boolean) v << (a.ints[1] ? "true" : "false");
      else v << a.ints[1];
      stack.push_back(v.str());
      continue;
    }
    std::string call(s.op->name);
    if (s.reads_attrs) call += "{" + attrs_text(a) + "}";
    auto arity = static_cast<std::size_t>(s.op->arity);
    call += "(";
    for (std::size_t k = stack.size() - arity; k < stack.size(); ++k) call += (k + arity > stack.size() ? ", " : "") + stack[k];
    stack.resize(stack.size() - arity);
    stack.push_back(call + ")");
  }
  return stack.back();
}
}  // namespace detail

/// The graph that computes `tensors`, one node per line:
///   %2 = add(%0, %1) f32[2, 2]
///   %3 = fragment{mul(relu(add(%0, %1)), 0.5)} f32[2, 2]
/// Computed values appear as device_data leaves; eager tensors have no graph and are skipped.
inline std::string ir_text(const std::vector<Tensor>& tensors) {
  NodeIndex number;
  std::ostringstream os;
  os << "IR {\n";
  for (const Node* n : detail::topo_nodes(tensors, number)) {
    os << "  %" << number.at(n) << " = " << n->op->name;
    if (!n->op->body.empty()) {
      os << "{" << detail::fragment_text(*n, number) << "}";
    } else {
      os << "(";
      for (std::size_t k = 0; k < n->inputs.size(); ++k) os << (k ? ", " : "") << "%" << number.at(n->inputs[k].get());
      os << ")";
      if (!n->attrs.ints.empty() || !n->attrs.floats.empty()) os << " {" << detail::attrs_text(n->attrs) << "}";
    }
    os << " " << name(n->meta.dtype) << n->meta.shape << "\n";
  }
  for (std::size_t k = 0; k < tensors.size(); ++k)
    if (auto* n = tensors[k].impl().node.get()) os << "  ROOT " << k << " = %" << number.at(n) << "\n";
  os << "}\n";
  return os.str();
}

/// The same graph in Graphviz DOT.
inline std::string ir_dot(const std::vector<Tensor>& tensors) {
  NodeIndex number;
  std::ostringstream os;
  os << "digraph G {\n";
  for (const Node* n : detail::topo_nodes(tensors, number)) {
    os << "  n" << number.at(n) << " [label=\"" << n->op->name;
    if (!n->op->body.empty()) os << "\\n" << detail::fragment_text(*n, number);
    os << "\\n" << name(n->meta.dtype) << n->meta.shape << "\"];\n";
    for (const NodePtr& in : n->inputs) os << "  n" << number.at(in.get()) << " -> n" << number.at(n) << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace lt::debug
