#pragma once
// lt::expect_cached: a scope in which no graph may compile. A barrier or a read whose graph
// is not in the plan cache raises lt::Error instead, saying why it would compile, and takes
// nothing: its tensors stay pending.
#include "lazytensor/runtime/api.hpp"

namespace lt {

/// A scope (RAII, per thread) in which a barrier or read whose graph would compile raises lt::Error, saying
/// why, instead of compiling: `{ lt::expect_cached guard; step(); }`.
class expect_cached {
 public:
  expect_cached() { ++detail::expect_cached_depth; }
  ~expect_cached() { --detail::expect_cached_depth; }
  expect_cached(const expect_cached&) = delete;
  expect_cached& operator=(const expect_cached&) = delete;
};

}  // namespace lt
