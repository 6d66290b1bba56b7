#pragma once
// Creation ops: full, arange, linspace, eye and the seeded random ops.
#include <array>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::creation {

inline constexpr std::array<const OpDesc*, 0> all{};

}  // namespace lt::creation
