#pragma once
// Identities that spare a pass over memory, applied as an op is recorded on a lazy device: the
// graph holds the cheaper form, so every executor (fused or the reference) runs the same one.
// Only where autograd does not record the op, so no gradient path changes.
#include <span>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/op_id.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt::detail {

/// Whether reducing over `dims` (ReductionAttrs, none: every dim) of a rank-4 value takes
/// both of its last two dims.
inline bool reduces_planes(const Attrs& attrs) {
  AttrWords dims = decode<ReductionAttrs>(attrs).dims;
  bool h = dims.empty(), w = h;
  for (std::int64_t d : dims) {
    h = h || d == 2;
    w = w || d == 3;
  }
  return h && w;
}

/// The node an op on `inputs` may read in place of its input, or null: a sum over H and W (and
/// any other dims) of max_pool2d_backward(g, x) is that sum of g, since every window's
/// gradient goes to exactly one element of its plane (a convolution's bias gradient under a
/// max pool reads the pooled gradient, a quarter of the size, instead of the full one).
inline NodePtr identity_operand(const OpDesc& op, std::span<const NodePtr> inputs, const Attrs& attrs) {
  if (op.id != OpId::sum || inputs.size() != 1 || inputs[0] == nullptr) return nullptr;
  const Node& in = *inputs[0];
  if (in.op->id != OpId::max_pool2d_backward || in.meta.shape.rank() != 4 || !reduces_planes(attrs)) return nullptr;
  return in.inputs[0];
}

}  // namespace lt::detail
