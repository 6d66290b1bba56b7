#pragma once
// Movement ops: views, concatenation, padding, indexing.
#include <array>

#include "lazytensor/ops/descriptor.hpp"

namespace lt::movement {

inline constexpr std::array<const OpDesc*, 0> all{};

}  // namespace lt::movement
