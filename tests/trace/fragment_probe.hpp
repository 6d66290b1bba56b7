#pragma once
// The same expression built in several translation units and processes, to compare the
// hashes each computes. Each unit gets its own copy of probe_fragment_here (an unnamed
// namespace), so the structural hash is folded by each unit's own compilation.
#include <cstdint>

#include <lazytensor/lazytensor.hpp>

namespace lt {

struct FragmentProbe {
  std::uint64_t structural_hash;  // computed by the compiler
  std::uint64_t node_hash;        // the recorded node's hash
};

FragmentProbe probe_fragment_in_other_unit();

namespace {
[[maybe_unused]] FragmentProbe probe_fragment_here() {
  Tensor a = zeros({64, 33}, device()), b = zeros({64, 33}, device()), c = zeros({33}, device());
  auto e = relu(a * b + c) * 0.5f - b;
  constexpr std::uint64_t structural = expr::structural_hash<expr::skeleton_t<decltype(e)>>;
  Tensor y = e;
  return {structural, y.impl().node->hash};
}
}  // namespace

}  // namespace lt
