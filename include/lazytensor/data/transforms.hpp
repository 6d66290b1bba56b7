#pragma once
// Transforms: callables from tensor to tensor, for the `transform` hooks of datasets.
#include <cmath>

#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::data {

/// (x - mean) / stddev, e.g. Normalize{0.2860, 0.3530} for Fashion-MNIST images in [0, 1].
struct Normalize {
  /// Subtracted from every value.
  double mean = 0.0;
  /// Every value is divided by it after the subtraction.
  double stddev = 1.0;

  /// (x - mean) / stddev; raises lt::Error unless mean is finite and stddev finite and positive.
  Tensor operator()(const Tensor& x) const {
    LT_CHECK(std::isfinite(mean) && std::isfinite(stddev) && stddev > 0.0,
             "Normalize: needs a finite mean and a positive stddev, got mean ", mean, " and stddev ", stddev);
    return (x - mean) / stddev;
  }
};

}  // namespace lt::data
