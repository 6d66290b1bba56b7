#pragma once
// The backward pass: runs the gradient rules of the recorded ops in reverse topological order,
// each rule's ops traced like forward ops. On a lazy device nothing runs here: the gradients
// are pending values, and forward, backward and the update become one graph at the barrier.
#include <memory>
#include <unordered_map>
#include <vector>

#include "lazytensor/autograd/builder.hpp"
#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/autograd/tape.hpp"
#include "lazytensor/trace/autocast.hpp"
#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"

namespace lt::detail {

/// grad += g, or grad = g for the first one. A new handle, so that rebinding a gradient (an
/// in-place update of it) never shows through another tensor.
inline void accumulate(Tensor& grad, const Tensor& g) {
  grad = grad.defined() ? Tensor(grad + g) : g.detach();
}

/// The nodes reachable from `root` and, for each, how many recorded inputs of other nodes
/// it made: a node runs once every consumer has passed its gradient on.
inline std::unordered_map<GradNode*, int> consumers_of(GradNode* root) {
  std::unordered_map<GradNode*, int> consumers{{root, 0}};
  std::vector<GradNode*> stack{root};
  while (!stack.empty()) {
    GradNode* n = stack.back();
    stack.pop_back();
    if (n->released)
      fail("backward: the graph through ", n->op->name,
           " was already freed by an earlier backward; pass retain_graph = true to that one to run backward twice");
    for (const GradNode::Edge& e : n->edges)
      if (e.node && consumers[e.node.get()]++ == 0) stack.push_back(e.node.get());
  }
  return consumers;
}

/// Runs node `n`'s rule on the gradient `g` of its output; returns each input's gradient,
/// of the input's shape and dtype (undefined: none).
inline std::vector<Tensor> run_rule(GradNode& n, const Tensor& g) {
  LT_CHECK(n.op->grad != nullptr, "backward: ", n.op->name, " has no gradient rule");
  TensorGradBuilder b(n.device);
  std::vector<GradValue> inputs;
  for (const Tensor& t : n.inputs) inputs.push_back(b.add(t));
  GradValue output = b.add(n.output), grad = b.add(g);
  std::vector<GradValue> grads(inputs.size());
  auto needs = std::make_unique<bool[]>(inputs.size());  // std::vector<bool> has no span
  for (std::size_t k = 0; k < inputs.size(); ++k) needs[k] = n.edges[k].node || n.edges[k].leaf;
  GradContext c{b, *n.op, n.attrs, inputs, output, grad, std::span<const bool>(needs.get(), inputs.size()), grads};
  n.op->grad(c);
  std::vector<Tensor> out(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!grads[k].defined() || !needs[k]) continue;
    const Tensor& in = n.inputs[k];
    Tensor gk = b.tensor(grads[k]);
    LT_CHECK(gk.shape() == in.shape(), "internal: the gradient rule of ", n.op->name, " gave input ", k,
             " a gradient of shape ", gk.shape(), " for shape ", in.shape());
    out[k] = gk.dtype() == in.dtype() ? gk : gk.to(in.dtype());
  }
  return out;
}

inline void backward(const Tensor& root, const Tensor& gradient, bool retain_graph) {
  const std::shared_ptr<AutogradMeta> meta = root.impl().autograd;
  if (!meta) fail("backward: the tensor does not require grad and has no grad_fn (operands: ", describe(root), ")");
  Tensor g = gradient;
  if (!g.defined()) {
    if (root.numel() != 1)
      fail("backward: a gradient can be implied only for a one-element output; pass backward(gradient) with a "
           "gradient of the output's shape (operands: ", describe(root), ")");
    g = full(root.shape(), 1, root.device(), root.dtype());
  } else if (g.shape() != root.shape() || g.device() != root.device() || !is_floating(g.dtype())) {
    fail("backward: the gradient must be floating and have the output's shape and device (operands: ",
         describe(root), ", ", describe(g), ")");
  }
  no_grad guard;
  autocast full_precision(DType::f32);  // gradients take the dtypes the forward ops chose
  if (g.dtype() != root.dtype()) g = g.to(root.dtype());
  if (!meta->grad_fn) return accumulate(meta->grad, g);

  GradNode* start = meta->grad_fn.get();
  std::unordered_map<GradNode*, int> consumers = consumers_of(start);
  std::unordered_map<GradNode*, Tensor> pending{{start, g}};
  // The leaves' gradients of this pass, added to their grad() only once every rule has run:
  // a pass that fails leaves every grad() as it was.
  std::unordered_map<std::shared_ptr<AutogradMeta>, Tensor> leaves;
  std::vector<std::shared_ptr<GradNode>> ready{meta->grad_fn}, visited;
  while (!ready.empty()) {
    std::shared_ptr<GradNode> n = std::move(ready.back());
    ready.pop_back();
    visited.push_back(n);
    auto it = pending.find(n.get());
    std::vector<Tensor> grads;
    if (it != pending.end()) {
      grads = run_rule(*n, it->second);
      pending.erase(it);
    }
    for (std::size_t k = 0; k < n->edges.size(); ++k) {
      const GradNode::Edge& e = n->edges[k];
      bool has = k < grads.size() && grads[k].defined();
      if (e.leaf && has) accumulate(leaves[e.leaf], grads[k]);
      if (!e.node) continue;
      if (has) accumulate(pending[e.node.get()], grads[k]);
      if (--consumers[e.node.get()] == 0) ready.push_back(e.node);
    }
  }
  for (auto& [leaf, grad] : leaves) accumulate(leaf->grad, grad);
  if (!retain_graph)
    for (const std::shared_ptr<GradNode>& n : visited) n->release();
}

}  // namespace lt::detail
