#pragma once
// NaN hunting: with LT_CHECK_NAN=1 or lt::debug::check_nan(true), every step runs node by node
// (the reference executor, no fusion) and each value an op makes is checked as it is made, so
// that the step fails with an lt::Error naming the first op that produced a NaN or an infinity.
// Slow, and meant to be: for finding where a loss went bad. The check: runtime/nan_scan.hpp.
#include <atomic>
#include <type_traits>

#include "lazytensor/core/env.hpp"

namespace lt {

namespace detail {
inline std::atomic<bool>& nan_check_flag() {
  static std::atomic<bool> on{env_flag("LT_CHECK_NAN", false)};
  return on;
}

}  // namespace detail

namespace debug {
/// Checks every value each step makes from now on, node by node (also on with LT_CHECK_NAN=1);
/// a step that makes a NaN or an infinity fails, naming the op that made it.
inline void check_nan(bool on = true) { lt::detail::nan_check_flag().store(on, std::memory_order_relaxed); }
}  // namespace debug

}  // namespace lt
