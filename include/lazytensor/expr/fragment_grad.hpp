#pragma once
// The gradient rule of every fragment: it walks the body. The steps are replayed op by op on
// the fragment's inputs (the values between them were never stored: the fused kernel keeps
// them in registers), then each op's own rule runs in reverse order, passing gradients from
// step to step, down to the tensor operands.
#include <span>
#include <vector>

#include "lazytensor/expr/fragment_attrs.hpp"
#include "lazytensor/ops/grad.hpp"

namespace lt::expr {

void fragment_grad(GradContext& c);

}  // namespace lt::expr
