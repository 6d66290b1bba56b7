#pragma once
// Reductions over any set of dims.
#include <array>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::reduction {

inline constexpr std::array<const OpDesc*, 0> all{};

}  // namespace lt::reduction
