#pragma once
// The check behind lt::debug::check_nan (runtime/nan_check.hpp): each value an op makes, scanned
// for a NaN or an infinity as the reference executor makes it.
#include <cmath>
#include <cstdint>
#include <span>

#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/runtime/nan_check.hpp"
#include "lazytensor/trace/debug.hpp"

namespace lt::detail {

/// The first element of `a` (contiguous, of a floating dtype with kernels) that is a NaN or an
/// infinity, or -1.
inline std::int64_t first_non_finite(const Array& a) {
  std::int64_t found = -1;
  if (!a.view.contiguous()) return found;
  const std::int64_t n = a.view.numel();
  auto scan = [&]<class T>(const T* p) {
    for (std::int64_t i = 0; i < n; ++i)
      if (!std::isfinite(p[i])) return i;
    return std::int64_t{-1};
  };
  if (a.view.dtype == DType::f32) found = scan(a.view.ptr<float>());
  else if (a.view.dtype == DType::f64) found = scan(a.view.ptr<double>());
  return found;
}

/// Raises lt::Error when value `a`, made at position `position` of schedule `s`, holds a NaN
/// or an infinity. The error shows the node as lt::debug::ir_text would, its inputs numbered
/// by their positions in the step.
inline void check_finite(const Schedule& s, int position, const Array& a) {
  const std::int64_t at = first_non_finite(a);
  if (at < 0) return;
  const double bad = a.view.dtype == DType::f32 ? static_cast<double>(a.view.ptr<float>()[at]) : a.view.ptr<double>()[at];
  const Node& n = *s.order[static_cast<std::size_t>(position)];
  NodeIndex number;
  number.emplace(&n, position);
  const std::span<const int> inputs = s.inputs[static_cast<std::size_t>(position)];
  for (std::size_t k = 0; k < n.inputs.size() && k < inputs.size(); ++k) number.emplace(n.inputs[k].get(), inputs[k]);
  fail("check_nan: ", debug::detail::node_text(n, number), " produced ", std::isnan(bad) ? "a NaN" : "an infinity",
       " at element ", at, debug::detail::recorded_at(n), " (LT_CHECK_NAN)");
}
}  // namespace lt::detail
