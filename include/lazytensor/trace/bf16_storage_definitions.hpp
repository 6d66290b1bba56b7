#pragma once
// bf16 storage's recording (trace/bf16_storage.hpp): included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own.
#include <utility>

#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/trace/bf16_storage.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt::detail {

namespace {
NodePtr cast_node(NodePtr in, DType to, const Site& site) {
  const Meta meta{in->meta.shape, to};
  return make_node(leaf::cast, encode(CastAttrs{to}), NodeInputs(1, [&](std::size_t) { return std::move(in); }),
                   meta, site);
}
}  // namespace

Tensor record_stored_bf16(const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs, const Meta& out, Device device) {
  const Site site = current_recording_site();
  const bool stored_out = stores_as_bf16(out);
  // Ops that only move or convert values take stored values as they are (a view of a stored
  // weight stays a view), where every f32 operand is stored. Collectives, which take bf16
  // storage too, exchange f32 (they have no bf16 kernels).
  bool as_stored = takes_bf16_storage(op) && (op.kind == OpKind::movement || op.kind == OpKind::elementwise);
  for (const Tensor& t : inputs) as_stored = as_stored && (t.dtype() != DType::f32 || stored_as_bf16(t.impl()));
  if (as_stored) {
    Meta stored = out;
    if (stored_out) stored.dtype = DType::bf16;
    // A cast to f32 is then one to the storage dtype: the same bits, or none made (a view).
    if (op.id == OpId::cast && stored_out) attrs = encode(CastAttrs{DType::bf16});
    NodePtr node = make_node(op, std::move(attrs), input_nodes(inputs), stored, site);
    return Tensor(new_impl(device, out, std::move(node), {}));
  }
  // The op in f32 on the stored values widened; its result rounded once. The casts fuse into
  // the loops around them, as a bf16 op's do.
  NodePtr node = make_node(op, std::move(attrs), NodeInputs(inputs.size(), [&](std::size_t k) {
                             const TensorImpl& t = inputs[k].impl();
                             return stored_as_bf16(t) ? cast_node(t.node, DType::f32, site) : t.node;
                           }),
                           out, site);
  if (stored_out) node = cast_node(std::move(node), DType::bf16, site);
  return Tensor(new_impl(device, out, std::move(node), {}));
}

Array stored_data(Array data) {
  if (!bf16_storage() || !stores_as_bf16(Meta{data.view.shape, data.view.dtype, data.view.wrapped_number})) return data;
  Array stored = Array::empty(DType::bf16, data.view.shape);
  if (stored.view.numel() > 0) kernels::copy_into(data.view, stored.view);  // rounds as lt::bfloat16 does
  return stored;
}

}  // namespace lt::detail
