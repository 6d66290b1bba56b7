#pragma once
// Fragments: an elementwise expression committed as one IR node. The descriptor of skeleton S
// carries the body (for IR dumps, autograd and fusion), its shape rule walks the body with each
// op's own rule, and its kernel is the fused loop instantiated from S.
#include <span>
#include <vector>

#include "lazytensor/expr/fragment_attrs.hpp"
#include "lazytensor/expr/fragment_grad.hpp"
#include "lazytensor/expr/fragment_kernel.hpp"
#include "lazytensor/expr/tree.hpp"

namespace lt::expr {

/// Runs every op's shape and dtype rule over the body, as recording the ops one by one would:
/// the Meta of the fragment's result. Throws what the first failing rule throws.
inline Meta infer_body(std::span<const FragmentStep> body, std::span<const Meta> inputs, const Attrs& attrs) {
  static const Attrs no_attrs;
  FragmentAttrsReader reader(attrs);
  std::vector<Meta> stack;
  stack.reserve(body.size());  // no reallocation: spans into the stack stay valid
  Attrs step_attrs;
  for (const FragmentStep& s : body) {
    if (s.op == nullptr) {
      stack.push_back(inputs[static_cast<std::size_t>(reader.input_of(s.slot))]);
      continue;
    }
    if (s.reads_attrs) reader.next(step_attrs);
    auto n = static_cast<std::size_t>(s.op->arity);
    Meta m = s.op->infer(std::span<const Meta>(stack.data() + stack.size() - n, n), s.reads_attrs ? step_attrs : no_attrs);
    stack.resize(stack.size() - n);
    stack.push_back(std::move(m));
  }
  return stack.back();
}

template <class S>
Meta fragment_infer(std::span<const Meta> in, const Attrs& attrs) {
  return infer_body(body<S>, in, attrs);
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
                                      &fragment_grad,
                                      std::span<const FragmentStep>(body<S>)};

}  // namespace lt::expr
