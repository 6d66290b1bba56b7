#pragma once
// ops/'s functions that a program compiles once: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own.
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/kernel_levels.hpp"

namespace lt {

Array execute_op(const OpDesc& desc, std::span<const Array> in, const Attrs& attrs, const Meta& out,
                        const Array* into) {
  const OpDesc& d = at_running_level(desc);
  constexpr std::size_t inline_inputs = 4;
  std::array<View, inline_inputs> small;
  std::vector<View> large;
  std::span<View> views = in.size() <= inline_inputs ? std::span<View>(small.data(), in.size())
                                                     : std::span<View>((large.resize(in.size()), large));
  for (std::size_t k = 0; k < in.size(); ++k) views[k] = in[k].view;
  count_run(d);
  if (d.view != nullptr) {
    View v;
    if (d.view(views, attrs, v)) return in[0].alias(v);
  }
  Array result = into != nullptr ? *into : Array::empty(out.dtype, out.shape);
  result.view.wrapped_number = out.wrapped_number;
  if (out.shape.numel() > 0) d.kernel(views, result.view, attrs);
  return result;
}

}  // namespace lt
