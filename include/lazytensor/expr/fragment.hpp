#pragma once
// Fragments: an elementwise expression committed as one IR node. The descriptor of skeleton S
// carries the body (for IR dumps, autograd and fusion), its shape rule walks the body with each
// op's own rule, and its kernel is the fused loop instantiated from S.
#include <optional>
#include <span>
#include <vector>

#include "lazytensor/expr/fragment_attrs.hpp"
#include "lazytensor/expr/fragment_kernel.hpp"
#include "lazytensor/expr/tree.hpp"

namespace lt::expr {

/// What a fragment produces, and whether its ops can run fused.
struct FragmentInfo {
  Meta out;
  DType compute = DType::f32;  // the type every op computes in, when `fusible`
  /// Fused, the ops give bitwise the results they give one by one: they all compute in one
  /// type, and every intermediate result has that type or is bool (exact in it).
  bool fusible = true;
};

/// Runs every op's shape and dtype rule over the body, as tracing the ops one by one would.
/// Throws what the first failing rule throws.
inline FragmentInfo analyse(std::span<const FragmentStep> body, std::span<const Meta> inputs, const Attrs& attrs) {
  static const Attrs no_attrs;
  FragmentAttrsReader reader(attrs);
  std::vector<Meta> stack;
  stack.reserve(body.size());  // no reallocation: spans into the stack stay valid
  Attrs step_attrs;
  std::optional<DType> compute;
  bool fusible = true;
  for (std::size_t k = 0; k < body.size(); ++k) {
    const FragmentStep& s = body[k];
    if (s.op == nullptr) {
      stack.push_back(inputs[static_cast<std::size_t>(reader.input_of(s.slot))]);
      continue;
    }
    if (s.reads_attrs) reader.next(step_attrs);
    auto n = static_cast<std::size_t>(s.op->arity);
    std::span<const Meta> args(stack.data() + stack.size() - n, n);
    Meta m = s.op->infer(args, s.reads_attrs ? step_attrs : no_attrs);
    if (s.compute != nullptr) {
      DType t = kernels::compute_dtype(s.compute(args, m.dtype));
      fusible = fusible && (!compute || *compute == t);
      compute = t;
      if (k + 1 < body.size()) fusible = fusible && (m.dtype == t || m.dtype == DType::boolean);
    }
    stack.resize(stack.size() - n);
    stack.push_back(std::move(m));
  }
  return {stack.back(), compute.value_or(DType::f32), fusible};
}

template <class S>
Meta fragment_infer(std::span<const Meta> in, const Attrs& attrs) {
  return analyse(body<S>, in, attrs).out;
}

/// The descriptor of every fragment of skeleton S.
template <class S>
inline constexpr OpDesc fragment_desc{OpId::fragment,
                                      "fragment",
                                      OpKind::elementwise,
                                      -1,
                                      &fragment_infer<S>,
                                      &fragment_kernel<S>,
                                      nullptr,
                                      nullptr,
                                      std::span<const FragmentStep>(body<S>)};

}  // namespace lt::expr
