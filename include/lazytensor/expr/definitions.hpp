#pragma once
// expr/'s functions that a program compiles once: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own.
#include "lazytensor/expr/fragment_grad.hpp"

namespace lt::expr {

void fragment_grad(GradContext& c) {
  std::span<const FragmentStep> body = c.op.body;
  const std::size_t n = body.size();
  // A body's last step is the fragment's output, so a body is never empty; checked, since
  // grads[n - 1] below would write before the vector otherwise.
  LT_CHECK(n > 0, "internal: a fragment with an empty body");
  FragmentAttrsReader reader(c.attrs);
  std::vector<Attrs> attrs(n);
  std::vector<GradValue> values(n), grads(n);
  std::vector<std::vector<std::size_t>> operands(n);  // the steps each op reads
  std::vector<int> input_of(n, -1);                    // tensor operands: the node's input
  std::vector<char> needs(n, 0);
  std::vector<std::size_t> stack;
  for (std::size_t k = 0; k < n; ++k) {
    const FragmentStep& s = body[k];
    if (s.op == nullptr) {
      input_of[k] = reader.input_of(s.slot);
      values[k] = c.input(static_cast<std::size_t>(input_of[k]));
      needs[k] = c.needs_grad(static_cast<std::size_t>(input_of[k]));
    } else {
      if (s.reads_attrs) reader.next(attrs[k]);
      auto arity = static_cast<std::size_t>(s.op->arity);
      operands[k].assign(stack.end() - static_cast<std::ptrdiff_t>(arity), stack.end());
      stack.resize(stack.size() - arity);
      std::vector<GradValue> in;
      for (std::size_t j : operands[k]) {
        in.push_back(values[j]);
        needs[k] = needs[k] || needs[j];
      }
      // The last step's value is the node's output: no need to compute it again.
      values[k] = k + 1 == n ? c.output : c.builder.apply(s.op->id, in, attrs[k]);
    }
    stack.push_back(k);
  }
  grads[n - 1] = c.grad;
  for (std::size_t k = n; k-- > 0;) {
    const FragmentStep& s = body[k];
    if (!grads[k].defined() || !needs[k]) continue;
    if (s.op == nullptr) {
      c.set(static_cast<std::size_t>(input_of[k]), grads[k]);
      continue;
    }
    if (s.op->grad == &not_differentiable) continue;
    LT_CHECK(s.op->grad != nullptr, "fragment: ", s.op->name, " has no gradient rule");
    std::vector<GradValue> in, out(operands[k].size());
    bool wanted[4] = {};  // elementwise ops take at most three operands
    for (std::size_t j = 0; j < operands[k].size(); ++j) {
      in.push_back(values[operands[k][j]]);
      wanted[j] = needs[operands[k][j]] != 0;
    }
    GradContext step{c.builder, *s.op, attrs[k], in, values[k], grads[k], std::span<const bool>(wanted, in.size()), out};
    s.op->grad(step);
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (!out[j].defined()) continue;
      GradValue& acc = grads[operands[k][j]];
      acc = acc.defined() ? acc + out[j] : out[j];
    }
  }
}

}  // namespace lt::expr
