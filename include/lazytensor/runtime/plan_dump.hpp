#pragma once
// Debug views of what a barrier would run: lt::debug::plan_text and lt::debug::plan_dot.
#include <string>
#include <vector>

#include "lazytensor/trace/tensor.hpp"

namespace lt::debug {

/// The plan that the barrier would run for `tensors`' pending graph, kernel by kernel: each
/// fusion group with its members in the IR's notation (%3 = add(%1, %2) f32[4, 4]), the
/// values it reads from outside, and where each value lives: a scratch tile that never leaves
/// the group, the step's arena, its own buffer, or a result. Compiles the graph; runs nothing.
///   kernel 1: fused group of 2 ops over f32[4, 4]
///     %2 = mul(%0, %1) f32[4, 4]  -> scratch tile
///     %3 = relu(%2) f32[4, 4]  -> result 0
std::string plan_text(const std::vector<Tensor>& tensors);

/// The same plan in Graphviz DOT: one cluster per kernel, each node labelled with where its
/// value lives.
std::string plan_dot(const std::vector<Tensor>& tensors);

}  // namespace lt::debug
