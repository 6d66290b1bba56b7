#pragma once
// Initial values of parameters, drawn from lt's default generator (see lt::manual_seed).
#include <cmath>

#include "lazytensor/trace/functions/creation.hpp"

namespace lt::nn::init {

/// Uniform in [-bound, bound), on the eager device.
inline Tensor uniform(Shape shape, double bound) {
  Tensor r = rand(shape);
  return r * (2 * bound) - bound;
}

/// PyTorch's default for Linear and Conv2d weights and biases: uniform in
/// [-1/sqrt(fan_in), 1/sqrt(fan_in)] (kaiming uniform with a = sqrt(5) comes to this bound).
inline Tensor fan_in_uniform(Shape shape, std::int64_t fan_in) {
  return uniform(shape, fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0);
}

}  // namespace lt::nn::init
