#pragma once
// Dropout: zeroes elements with probability p while training; the identity in eval mode.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"

namespace lt::nn {

/// Dropout as a module: zeroes each value with probability p and scales the rest by 1 / (1 - p) while
/// training; the identity in eval mode.
class Dropout : public Callable<Dropout> {
 public:
  /// Raises lt::Error for p outside [0, 1].
  explicit Dropout(double p = 0.5) : p(p) {
    LT_CHECK(p >= 0 && p <= 1, "Dropout: p must be in [0, 1], got ", p);
  }
  /// dropout(x, p) while training, x itself in eval mode.
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return dropout(x, p, is_training());
  }

  /// The probability of zeroing a value.
  double p;
};

}  // namespace lt::nn
