#pragma once
// Recording an op: check devices, infer shape and dtype, then either append an IR node (lazy
// device) or run the kernel now (eager device). A failed check records nothing.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/trace/bf16_storage.hpp"
#include "lazytensor/trace/grad_hooks.hpp"
#include "lazytensor/trace/identities.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt {

/// An operand as the checks see it: its Meta (null for an undefined tensor) and its device.
struct OperandRef {
  const Meta* meta;
  Device device;
};

/// "f32[2, 3] on lazy:0": how errors name an operand.
inline std::string describe(OperandRef o) {
  if (o.meta == nullptr) return "undefined tensor";
  return detail::concat(name(o.meta->dtype), o.meta->shape, " on ", o.device);
}
inline OperandRef operand_ref(const Tensor& t) { return {t.defined() ? &t.meta() : nullptr, t.defined() ? t.device() : cpu}; }
inline std::string describe(const Tensor& t) { return describe(operand_ref(t)); }

template <class Operand>
std::string describe(std::span<const Operand> operands) {
  std::string s;
  for (std::size_t k = 0; k < operands.size(); ++k) s += (k ? ", " : "") + describe(operands[k]);
  return s;
}

/// Raises lt::Error naming the op and its operands (Tensors or OperandRefs).
template <class Operand>
[[noreturn]] void op_error(std::string_view op, std::span<const Operand> operands, std::string_view why) {
  if (operands.empty()) fail(op, ": ", why);
  fail(op, ": ", why, " (operands: ", describe(operands), ")");
}
[[noreturn]] inline void op_error(std::string_view op, std::span<const Tensor> operands, std::string_view why) {
  op_error<Tensor>(op, operands, why);
}

namespace detail {
/// `op`'s shape and dtype rule on `metas`; its error names the op and the operands.
inline Meta infer_or_fail(const OpDesc& op, std::span<const OperandRef> in, std::span<const Meta> metas,
                          const Attrs& attrs) {
  try {
    return op.infer(metas, attrs);
  } catch (const Error& e) {
    op_error(op.name, in, e.what());
  }
}
}  // namespace detail

/// Checks that the operands are defined and on one device (which it stores in `device`),
/// then runs the op's shape and dtype rule on `metas` (the operands' Metas).
inline Meta check_and_infer(const OpDesc& op, std::span<const OperandRef> in, std::span<const Meta> metas,
                            const Attrs& attrs, Device& device) {
  LT_CHECK(op.arity < 0 || static_cast<std::size_t>(op.arity) == in.size(), op.name, ": expected ", op.arity,
           " operands, got ", in.size());
  for (const OperandRef& o : in)
    if (o.meta == nullptr) op_error(op.name, in, "an operand is undefined");
  if (!in.empty()) {
    // Field by field: a Device made just before is stored a field at a time, and one load of
    // the whole of it would wait for both stores to land (on every op traced).
    device.kind = in[0].device.kind;
    device.index = in[0].device.index;
    for (const OperandRef& o : in.subspan(1))
      if (o.device != device)
        op_error(op.name, in, detail::concat("operands are on different devices, ", device, " and ", o.device,
                                             " (move one with .to(device))"));
  }
  // Made in place and returned as it is: a Meta copied out of a try block is read back with
  // wide loads over the narrow stores that made it, which stalls on every op traced.
  Meta out = detail::infer_or_fail(op, in, metas, attrs);
  // A count that wraps would reach an allocation or a kernel as a small one.
  try {
    checked_bytes(out.shape, itemsize(out.dtype), "the result's size");
  } catch (const Error& e) {
    op_error(op.name, in, e.what());
  }
  return out;
}

namespace detail {
inline TensorImplPtr new_impl(Device device, const Meta& meta, NodePtr node, Array data) {
  TensorImplPtr impl = make_tensor_impl(device, meta, std::move(node), std::move(data));
  track_if_pending(*impl);
  return impl;
}
}  // namespace detail

/// A tensor on `device` holding `data`: a device_data leaf on a lazy device (f32 data stored
/// as bf16 under bf16 storage).
inline Tensor tensor_from_array(Array data, Device device) {
  Meta meta{data.view.shape, data.view.dtype, data.view.wrapped_number};
  NodePtr node;
  if (device.is_lazy()) node = make_data_node(leaf::device_data, detail::stored_data(std::exchange(data, {})));
  return Tensor(detail::new_impl(device, meta, std::move(node), std::move(data)));
}

inline Tensor Tensor::detach() const {
  const TensorImpl& t = impl();
  return Tensor(detail::new_impl(t.device, t.meta, t.node, t.data));
}

namespace detail {
/// The nodes of lazy tensors `inputs`, as a new node's inputs.
inline NodeInputs input_nodes(std::span<const Tensor> inputs) {
  return NodeInputs(inputs.size(), [&](std::size_t k) { return inputs[k].impl().node; });
}

/// A tensor of lazy `device` whose value is `op` on `nodes`.
inline Tensor lazy_result(const OpDesc& op, NodeInputs&& nodes, Attrs&& attrs, const Meta& out, Device device) {
  NodePtr node = make_node(op, std::move(attrs), std::move(nodes), out, current_recording_site());
  return Tensor(detail::new_impl(device, out, std::move(node), {}));
}

/// Appends `op` on checked `inputs` with result `out` to the lazy graph, or runs it now on the
/// eager device, leaving autograd out.
Tensor emit_untracked(const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs, const Meta& out,
                             Device device);

inline bool any_requires_grad(std::span<const Tensor> inputs) {
  for (const Tensor& t : inputs)
    if (t.impl().autograd) return true;
  return false;
}

/// The autograd hooks that record an op on `inputs`, or null: none is installed, or no input
/// requires grad.
inline const GradHooks* recording_hooks(std::span<const Tensor> inputs) {
  const GradHooks* hooks = grad_hooks.load(std::memory_order_relaxed);
  return hooks != nullptr && any_requires_grad(inputs) ? hooks : nullptr;
}
}  // namespace detail

/// Appends `op` on checked `inputs` with result `out` to the lazy graph, or runs it now on the
/// eager device; autograd records it when an input requires grad.
inline Tensor emit(const OpDesc& op, std::span<const Tensor> inputs, Attrs attrs, const Meta& out, Device device) {
  if (const GradHooks* hooks = detail::recording_hooks(inputs)) {
    Attrs kept = attrs;
    Tensor result = detail::emit_untracked(op, inputs, std::move(attrs), out, device);
    hooks->record(op, inputs, kept, result);
    return result;
  }
  return detail::emit_untracked(op, inputs, std::move(attrs), out, device);
}

namespace detail {
/// `dst = emit(op, inputs, attrs, out, device)`, for an assignment whose right-hand side held
/// `passing` further handles of dst's state, which go when the assignment ends. When
/// nothing else holds that state, the state itself takes the new pending value: no state is
/// made, listed, unlisted and freed for what is only a new value of the same variable. And
/// where dst's old value is an input of the new one, the state's handle of the old node moves
/// into the new node: its count, an atomic one, changes neither way. The node is recorded at
/// `site`.
void emit_into(Tensor& dst, long passing, const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs,
                      const Meta& out, Device device, const Site& site);
}  // namespace detail

/// Records `op` on `inputs` (all on one device) or, with no inputs, on `device`.
Tensor record(const OpDesc& op, std::span<const Tensor> inputs, Attrs attrs = {}, Device device = cpu);

inline Tensor record(const OpDesc& op, std::initializer_list<Tensor> inputs, Attrs attrs = {}, Device device = cpu) {
  return record(op, std::span<const Tensor>(inputs.begin(), inputs.size()), std::move(attrs), device);
}

namespace detail {
/// `t` converted to `to`, recorded as one cast.
inline Tensor record_cast(const Tensor& t, DType to) {
  return record(leaf::cast, std::span<const Tensor>(&t, 1), encode(CastAttrs{to}));
}
}  // namespace detail

/// A C++ scalar as a zero-dim operand on `device`.
inline Tensor scalar_tensor(Scalar s, Device device) {
  return record(leaf::scalar, std::span<const Tensor>{}, encode(ScalarAttrs::of(s)), device);
}

}  // namespace lt
