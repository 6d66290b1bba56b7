#pragma once
// Dtype rules of elementwise ops (PyTorch's), and the descriptor builder that pairs a
// functor with a rule. A rule says which dtype results, which dtype the functor computes
// in, and which compute types it has kernels for.
#include <algorithm>
#include <span>
#include <type_traits>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"

namespace lt {

/// The promoted dtype of operands, Metas or Views (torch.result_type).
template <class Operand>
DType result_type(std::span<const Operand> in) {
  // Operands of one dtype promote to it, whatever their standing, a C++ float counting as the
  // default float: most ops, decided here on every op traced without grouping the operands.
  auto counted = [](const Operand& m) { return m.wrapped_number && is_floating(m.dtype) ? default_float : m.dtype; };
  if (!in.empty()) {
    const DType first = counted(in[0]);
    if (std::all_of(in.begin() + 1, in.end(), [&](const Operand& m) { return counted(m) == first; })) return first;
  }
  ResultType r;
  for (const Operand& m : in)
    r.add(m.dtype, m.wrapped_number ? ResultType::Standing::wrapped
                   : m.shape.rank() == 0 ? ResultType::Standing::zero_dim
                                         : ResultType::Standing::dimensioned);
  return r.result();
}

template <class T> inline constexpr bool is_float_type = std::is_floating_point_v<T>;

namespace rules {

/// Result keeps the promoted dtype (add, mul, maximum, neg, abs, ...).
template <bool AllowBool = true>
struct Promote {
  template <class T> static constexpr bool supports = true;
  static DType result(std::span<const Meta> in) {
    DType t = result_type(in);
    LT_CHECK(AllowBool || t != DType::boolean, "not supported for bool operands");
    return t;
  }
  template <class Operand> static DType compute(std::span<const Operand>, DType out) { return out; }
};

/// Result is floating: integers and bools compute in the default float (exp, div, atan2).
struct ToFloat {
  template <class T> static constexpr bool supports = is_float_type<T>;
  static DType result(std::span<const Meta> in) {
    DType t = result_type(in);
    return is_floating(t) ? t : default_float;
  }
  template <class Operand> static DType compute(std::span<const Operand>, DType out) { return out; }
};

/// Result is bool, computed in the operands' promoted dtype (eq, lt, isnan, logical_and).
struct ToBool {
  template <class T> static constexpr bool supports = true;
  static DType result(std::span<const Meta>) { return DType::boolean; }
  template <class Operand> static DType compute(std::span<const Operand> in, DType) { return result_type(in); }
};

/// Like Promote, but the first operand is a bool condition that does not take part (where).
struct Select {
  template <class T> static constexpr bool supports = true;
  static DType result(std::span<const Meta> in) {
    LT_CHECK(in[0].dtype == DType::boolean, "the condition must be bool, not ", name(in[0].dtype));
    return result_type(in.subspan(1));
  }
  template <class Operand> static DType compute(std::span<const Operand>, DType out) { return out; }
};

}  // namespace rules

/// Broadcast shape of all operands, dtype from the rule.
template <class Rule>
Meta elementwise_infer(std::span<const Meta> in, const Attrs&) {
  // Most ops trace on operands of one shape, or beside zero-dim ones (C++ scalars): their
  // result shape needs no broadcast, and tracing is on every op's path.
  const Meta* widest = &in[0];
  bool one_shape = true;
  for (const Meta& m : in.subspan(1)) {
    if (m.shape.rank() == 0) continue;
    if (widest->shape.rank() == 0) widest = &m;
    else one_shape = one_shape && m.shape == widest->shape;
  }
  if (one_shape) {
    return {widest->shape, Rule::result(in)};
  }
  Shape s = in[0].shape;
  for (const Meta& m : in.subspan(1)) {
    Shape next;
    LT_CHECK(try_broadcast(s, m.shape, next), "shapes ", s, " and ", m.shape, " do not broadcast");
    s = next;
  }
  return {s, Rule::result(in)};
}

/// The descriptor of an elementwise op: an OpDesc that also names, as types, its functor and
/// dtype rule, so that expression templates can fuse the op from its table entry alone.
template <class Fn, class Rule, std::size_t N, OpId Id>
struct ElementwiseDesc : OpDesc {
  using functor = Fn;
  using rule = Rule;
  static constexpr std::size_t operand_count = N;
  static constexpr OpId op_id = Id;  // readable where the descriptor's value is not
};

/// Descriptor of an elementwise op with N tensor operands. A functor with a static `infer`
/// replaces the broadcast rule (ops whose attributes take part in promotion: clamp).
template <std::size_t N, class Fn, class Rule, OpId id>
constexpr ElementwiseDesc<Fn, Rule, N, id> elementwise_op(std::string_view name, GradFn grad) {
  InferFn infer = &elementwise_infer<Rule>;
  if constexpr (requires { &Fn::infer; }) infer = &Fn::infer;
  return {OpDesc{.id = id,
                 .name = name,
                 .kind = OpKind::elementwise,
                 .arity = static_cast<int>(N),
                 .infer = infer,
                 .kernel = &kernels::elementwise_kernel<Fn, Rule, N>,
                 .grad = grad,
                 .bind = &kernels::elementwise_bind<Fn, Rule, N>}};
}

}  // namespace lt
