#pragma once
// Dropout: zeroes elements with probability p while training; the identity in eval mode.
#include "lazytensor/nn/module.hpp"
#include "lazytensor/trace/functions/creation.hpp"

namespace lt::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5) : p(p) {
    LT_CHECK(p >= 0 && p <= 1, "Dropout: p must be in [0, 1], got ", p);
  }
  Tensor forward(const Tensor& x, Site site = Site::current()) const {
    RecordingSite at(site);
    return dropout(x, p, is_training());
  }
  Tensor operator()(const Tensor& x, Site site = Site::current()) const { return forward(x, site); }

  double p;
};

}  // namespace lt::nn
