#pragma once
// The tape: each op recorded with grad leaves a GradNode, reached from its result's
// AutogradMeta. Nodes point to their inputs' nodes only (results are not referenced back), and
// backward() releases what they saved, so nothing keeps an old step's graph alive.
#include <memory>
#include <vector>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt {

struct GradNode;

/// Reverse-mode state of a tensor that requires grad (TensorImpl::autograd).
struct AutogradMeta {
  std::shared_ptr<GradNode> grad_fn;  // the op that made the tensor; null for a leaf
  Tensor grad;                        // leaves: the accumulated gradient
};

/// One recorded op: what its gradient rule reads, and where each input's gradient goes.
struct GradNode {
  /// Input k's gradient goes to the node that made it, or into a leaf's grad, or nowhere.
  struct Edge {
    std::shared_ptr<GradNode> node;
    std::shared_ptr<AutogradMeta> leaf;
  };

  const OpDesc* op;
  Attrs attrs;
  Device device;
  // Values as the op saw them, cut from autograd (detached): a later in-place update of an
  // input does not change them, and they hold no reference to this node.
  std::vector<Tensor> inputs;
  Tensor output;
  std::vector<Edge> edges;  // one per input
  bool released = false;    // a backward pass freed the saved values

  void release() {
    inputs.clear();
    output = Tensor();
    edges.clear();
    released = true;
  }
};

}  // namespace lt
