#pragma once
// trace/'s functions that a program compiles once (IR dumps, recording an op): included by
// the implementation (lazytensor/implementation.hpp), never by a file of its own.
#include "lazytensor/trace/autocast.hpp"
#include "lazytensor/trace/debug.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt::debug::detail {

std::string fragment_text(const Node& n, const NodeIndex& number) {
  expr::FragmentAttrsReader reader(n.attrs);
  std::vector<std::string> stack;
  Attrs a;
  for (const FragmentStep& s : n.op->body) {
    if (s.op == nullptr) {
      stack.push_back("%" + std::to_string(number.at(n.inputs[static_cast<std::size_t>(reader.input_of(s.slot))].get())));
      continue;
    }
    if (s.reads_attrs) reader.next(a);
    if (s.op->arity == 0) {  // a scalar operand
      std::ostringstream v;
      auto scalar = decode<ScalarAttrs>(a);
      if (scalar.dtype == DType::f64) v << scalar.real;
      else if (scalar.dtype == DType::boolean) v << (scalar.integer.value ? "true" : "false");
      else v << scalar.integer.value;
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

std::string node_text(const Node& n, const NodeIndex& number) {
  std::ostringstream os;
  os << "%" << number.at(&n) << " = " << n.op->name;
  if (!n.op->body.empty()) {
    os << "{" << fragment_text(n, number) << "}";
  } else {
    os << "(";
    for (std::size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << "%" << number.at(n.inputs[k].get());
    os << ")";
    if (!n.attrs.empty()) os << " {" << attrs_text(n.attrs) << "}";
  }
  os << " " << name(n.meta.dtype) << n.meta.shape;
  return os.str();
}

}  // namespace lt::debug::detail

namespace lt::debug {

std::string ir_text(const std::vector<Tensor>& tensors) {
  NodeIndex number;
  std::ostringstream os;
  os << "IR {\n";
  for (const Node* n : detail::topo_nodes(tensors, number)) {
    os << "  " << detail::node_text(*n, number);
    if (known(n->site)) os << "  # " << site_text(n->site);
    os << "\n";
  }
  for (std::size_t k = 0; k < tensors.size(); ++k)
    if (auto* n = tensors[k].impl().node.get()) os << "  ROOT " << k << " = %" << number.at(n) << "\n";
  os << "}\n";
  return os.str();
}

std::string ir_dot(const std::vector<Tensor>& tensors) {
  NodeIndex number;
  std::ostringstream os;
  os << "digraph G {\n";
  for (const Node* n : detail::topo_nodes(tensors, number)) {
    os << "  n" << number.at(n) << " [label=\"" << n->op->name;
    if (!n->op->body.empty()) os << "\\n" << detail::fragment_text(*n, number);
    os << "\\n" << name(n->meta.dtype) << n->meta.shape;
    if (known(n->site)) os << "\\n" << site_text(n->site);
    os << "\"];\n";
    for (const NodePtr& in : n->inputs) os << "  n" << number.at(in.get()) << " -> n" << number.at(n) << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace lt::debug

namespace lt::detail {

Tensor emit_untracked(const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs, const Meta& out,
                             Device device) {
  if (device.is_lazy()) {
    if (bf16_storage()) [[unlikely]]
      return record_stored_bf16(op, inputs, std::move(attrs), out, device);
    return lazy_result(op, input_nodes(inputs), std::move(attrs), out, device);
  }
  std::vector<Array> arrays;
  arrays.reserve(inputs.size());
  for (const Tensor& t : inputs) arrays.push_back(t.impl().data);
  return Tensor(detail::new_impl(device, out, nullptr, execute_op(op, arrays, attrs, out)));
}

void emit_into(Tensor& dst, long passing, const OpDesc& op, std::span<const Tensor> inputs, Attrs&& attrs,
                      const Meta& out, Device device, const Site& site) {
  if (!dst.defined() || !device.is_lazy() || dst.device() != device || dst.impl().autograd ||
      recording_hooks(inputs) != nullptr || bf16_storage()) {
    RecordingSite at(site);
    dst = emit(op, inputs, std::move(attrs), out, device);
    return;
  }
  TensorImpl& state = dst.impl();
  const Node* const old = state.node.get();
  std::size_t own_at = inputs.size();  // the input that is dst's old value, if any
  NodePtr node = make_node(op, std::move(attrs), NodeInputs(inputs.size(), [&](std::size_t k) {
                             if (own_at == inputs.size() && inputs[k].impl_ptr() == dst.impl_ptr()) {
                               own_at = k;
                               return borrowed_node(state.node);
                             }
                             return inputs[k].impl().node;
                           }),
                           out, site);
  NodePtr replaced;  // released after the rebind, which releases no last handle
  const bool rebound = lazy_context(device.index).rebind_unshared(dst.impl_ptr(), 1 + passing, [&](TensorImpl& t) __attribute__((always_inline)) {
    if (t.node.get() != old) return false;  // rebound meanwhile (a barrier): the new node names a stale input
    t.meta = out;
    if (own_at < inputs.size()) own_input(node, own_at, std::move(t.node));
    else replaced = std::move(t.node);
    t.node = std::move(node);
    return true;
  });
  if (rebound) return;
  if (own_at < inputs.size()) {
    if (state.node.get() != old) {
      RecordingSite at(site);
      dst = emit(op, inputs, Attrs(node->attrs), out, device);
      return;
    }
    own_input(node, own_at, NodePtr(state.node));
  }
  dst = Tensor(new_impl(device, out, std::move(node), {}));
}

}  // namespace lt::detail

namespace lt::detail {

/// Whether `op` on operands `metas` computes on low-precision values (bf16, f16): then it is
/// recorded in f32 between casts (record_in_f32). A creation op makes them when its dtype
/// attribute says so.
inline bool computes_low_precision(const OpDesc& op, std::span<const Meta> metas, const Attrs& attrs) {
  if (takes_bf16_storage(op)) return false;
  if (op.kind == OpKind::creation) return is_low_precision(creation_dtype(attrs));
  for (const Meta& m : metas)
    if (is_low_precision(m.dtype)) return true;
  return false;
}

/// `op` on `inputs`, whose result `out` was inferred and checked with their own dtypes (so
/// promotion is PyTorch's and a bad operand failed before anything was recorded): the
/// low-precision inputs cast to f32, the op in f32, its result cast back where `out` is
/// low-precision. Each op result is thereby rounded once, as PyTorch's CPU kernels round;
/// fusion merges the casts into the loops of their neighbours, and autograd passes through them.
Tensor record_in_f32(const OpDesc& op, std::span<const Tensor> inputs, Attrs attrs, const Meta& out, Device device) {
  std::vector<Tensor> widened(inputs.begin(), inputs.end());
  for (Tensor& t : widened)
    if (is_low_precision(t.dtype())) t = record_cast(t, DType::f32);
  if (op.kind == OpKind::creation) set_creation_dtype(attrs, DType::f32);
  Tensor result = record(op, widened, std::move(attrs), device);
  if (is_low_precision(out.dtype) && result.dtype() != out.dtype) result = record_cast(result, out.dtype);
  LT_CHECK(result.dtype() == out.dtype, op.name, ": computed in f32 as ", name(result.dtype()), ", inferred ",
           name(out.dtype));
  return result;
}

}  // namespace lt::detail

namespace lt {

Tensor record(const OpDesc& op, std::span<const Tensor> inputs, Attrs attrs, Device device) {
  constexpr std::size_t inline_inputs = 4;
  std::array<Meta, inline_inputs> small;
  std::array<OperandRef, inline_inputs> small_refs;
  std::vector<Meta> large(inputs.size() > inline_inputs ? inputs.size() : 0);
  std::vector<OperandRef> large_refs(large.size());
  std::span<Meta> metas = large.empty() ? std::span<Meta>(small.data(), inputs.size()) : std::span<Meta>(large);
  std::span<OperandRef> refs =
      large.empty() ? std::span<OperandRef>(small_refs.data(), inputs.size()) : std::span<OperandRef>(large_refs);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    refs[k] = operand_ref(inputs[k]);
    if (refs[k].meta != nullptr) metas[k] = *refs[k].meta;
  }
  Meta out = check_and_infer(op, refs, metas, attrs, device);
  if (autocast_enabled()) [[unlikely]]
    if (std::optional<Tensor> cast = detail::autocast_record(op, inputs, attrs, device)) return std::move(*cast);
  if (detail::computes_low_precision(op, metas, attrs)) [[unlikely]]
    return detail::record_in_f32(op, inputs, std::move(attrs), out, device);
  if (inputs.size() == 1 && inputs[0].device().is_lazy() && !detail::any_requires_grad(inputs))
    if (NodePtr alt = detail::identity_operand(op, std::span(&inputs[0].impl().node, 1), attrs))
      return detail::lazy_result(op, NodeInputs(1, [&](std::size_t) { return alt; }), std::move(attrs), out,
                                 inputs[0].device());
  return emit(op, inputs, std::move(attrs), out, device);
}

}  // namespace lt
