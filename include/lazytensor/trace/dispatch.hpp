#pragma once
// Recording an op: check devices, infer shape and dtype, then either append an IR node (lazy
// device) or run the kernel now (eager device). A failed check records nothing.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/trace/lazy_context.hpp"

namespace lt {

/// "f32[2, 3] on lazy:0": how errors name an operand.
inline std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  return detail::concat(name(t.dtype()), t.shape(), " on ", t.device());
}

inline std::string describe(std::span<const Tensor> ts) {
  std::string s;
  for (std::size_t k = 0; k < ts.size(); ++k) s += (k ? ", " : "") + describe(ts[k]);
  return s;
}

/// Raises lt::Error naming the op and its operands.
[[noreturn]] inline void op_error(std::string_view op, std::span<const Tensor> operands, std::string_view why) {
  if (operands.empty()) fail(op, ": ", why);
  fail(op, ": ", why, " (operands: ", describe(operands), ")");
}

namespace detail {
inline std::shared_ptr<TensorImpl> new_impl(Device device, const Meta& meta, NodePtr node, Array data) {
  auto impl = std::make_shared<TensorImpl>(TensorImpl{device, meta, std::move(node), std::move(data)});
  if (device.is_lazy() && impl->node && !impl->node->is_data()) lazy_context(device.index).track(impl);
  return impl;
}
}  // namespace detail

/// A tensor on `device` holding `data`: a device_data leaf on a lazy device.
inline Tensor tensor_from_array(Array data, Device device) {
  Meta meta{data.view.shape, data.view.dtype, data.view.wrapped_number};
  NodePtr node;
  if (device.is_lazy()) node = make_data_node(leaf::device_data, std::exchange(data, {}));
  return Tensor(detail::new_impl(device, meta, std::move(node), std::move(data)));
}

/// Records `op` on `inputs` (all on one device) or, with no inputs, on `device`.
inline Tensor record(const OpDesc& op, std::span<const Tensor> inputs, Attrs attrs = {}, Device device = cpu) {
  LT_CHECK(op.arity < 0 || static_cast<std::size_t>(op.arity) == inputs.size(), op.name, ": expected ", op.arity,
           " operands, got ", inputs.size());
  for (const Tensor& t : inputs)
    if (!t.defined()) op_error(op.name, inputs, "an operand is undefined");
  if (!inputs.empty()) {
    device = inputs[0].device();
    for (const Tensor& t : inputs.subspan(1))
      if (t.device() != device)
        op_error(op.name, inputs, detail::concat("operands are on different devices, ", device, " and ", t.device(),
                                                 " (move one with .to(device))"));
  }
  constexpr std::size_t inline_inputs = 4;
  std::array<Meta, inline_inputs> small;
  std::vector<Meta> large(inputs.size() > inline_inputs ? inputs.size() : 0);
  std::span<Meta> metas = large.empty() ? std::span<Meta>(small.data(), inputs.size()) : std::span<Meta>(large);
  for (std::size_t k = 0; k < inputs.size(); ++k) metas[k] = inputs[k].meta();
  Meta out;
  try {
    out = op.infer(metas, attrs);
  } catch (const Error& e) {
    op_error(op.name, inputs, e.what());
  }
  if (device.is_lazy()) {
    std::vector<NodePtr> nodes;
    nodes.reserve(inputs.size());
    for (const Tensor& t : inputs) nodes.push_back(t.impl().node);
    return Tensor(detail::new_impl(device, out, make_node(op, std::move(attrs), std::move(nodes), out), {}));
  }
  std::vector<Array> arrays;
  arrays.reserve(inputs.size());
  for (const Tensor& t : inputs) arrays.push_back(t.impl().data);
  return Tensor(detail::new_impl(device, out, nullptr, execute_op(op, arrays, attrs, out)));
}

inline Tensor record(const OpDesc& op, std::initializer_list<Tensor> inputs, Attrs attrs = {}, Device device = cpu) {
  return record(op, std::span<const Tensor>(inputs.begin(), inputs.size()), std::move(attrs), device);
}

/// A C++ scalar as a zero-dim operand on `device`.
inline Tensor scalar_tensor(Scalar s, Device device) {
  return record(leaf::scalar, std::span<const Tensor>{}, Attrs{{static_cast<std::int64_t>(s.dtype), s.i}, {s.f}}, device);
}

}  // namespace lt
