#pragma once
// Contractions and windows: matmul, conv2d, pooling.
#include <array>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::contraction {

inline constexpr std::array<const OpDesc*, 0> all{};

}  // namespace lt::contraction
