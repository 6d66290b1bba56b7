#pragma once
// W1's expression written with xtensor, the peer the targets name: one xtensor expression
// assigned to a preallocated array, with xsimd packets and TBB over the assignment where the
// benchmark is built with them (XTENSOR_USE_XSIMD, XTENSOR_USE_TBB).
#include <cstddef>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

namespace bench {

struct XtensorW1 {
  xt::xtensor<float, 1> a, b, c, out;

  XtensorW1(const std::vector<float>& va, const std::vector<float>& vb, const std::vector<float>& vc)
      : a(xt::adapt(va)), b(xt::adapt(vb)), c(xt::adapt(vc)), out(xt::empty<float>({va.size()})) {}

  void run() { xt::noalias(out) = xt::maximum(a * b + c, 0.0f) * 0.5f - b; }
};

}  // namespace bench
