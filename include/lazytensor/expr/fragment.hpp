#pragma once
// Fragments: an elementwise expression committed as one IR node. The descriptor of skeleton S
// carries the body (for IR dumps, autograd and fusion), its shape rule walks the body with each
// op's own rule, and its kernel is the fused loop instantiated from S.
#include <array>
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
  // Bodies are short: their values fit on the C++ stack, spans into it stay valid.
  constexpr std::size_t inline_steps = 16;
  std::array<Meta, inline_steps> small;
  std::vector<Meta> large(body.size() > inline_steps ? body.size() : 0);
  Meta* stack = large.empty() ? small.data() : large.data();
  std::size_t top = 0;
  thread_local Attrs step_attrs;
  for (const FragmentStep& s : body) {
    if (s.op == nullptr) {
      stack[top++] = inputs[static_cast<std::size_t>(reader.input_of(s.slot))];
      continue;
    }
    if (s.reads_attrs) reader.next(step_attrs);
    auto n = static_cast<std::size_t>(s.op->arity);
    Meta m = s.op->infer(std::span<const Meta>(stack + top - n, n), s.reads_attrs ? step_attrs : no_attrs);
    top -= n;
    stack[top++] = m;
  }
  return stack[top - 1];
}

template <class S>
Meta fragment_infer(std::span<const Meta> in, const Attrs& attrs) {
  return infer_body(body<S>, in, attrs);
}

/// The descriptor of every fragment of skeleton S.
template <class S>
inline constexpr OpDesc fragment_desc{.id = OpId::fragment,
                                      .name = "fragment",
                                      .kind = OpKind::elementwise,
                                      .arity = -1,
                                      .infer = &fragment_infer<S>,
                                      .kernel = &fragment_kernel<S>,
                                      .grad = &fragment_grad,
                                      .body = std::span<const FragmentStep>(body<S>),
                                      .bind = &fragment_bind<S>};

}  // namespace lt::expr
