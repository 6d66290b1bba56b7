#pragma once
// Whether two arrays hold the same dtype, shape and bits, whatever their strides: how the plan
// tests and the plan fuzzer compare a plan's results with the reference executor's.
#include <cstring>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernels/copy.hpp>

namespace lt::oracle {

inline bool same_bits(const Array& a, const Array& b) {
  if (a.view.dtype != b.view.dtype || a.view.shape != b.view.shape) return false;
  Array ca = Array::empty(a.view.dtype, a.view.shape), cb = Array::empty(b.view.dtype, b.view.shape);
  if (ca.view.numel() == 0) return true;
  kernels::copy_into(a.view, ca.view);
  kernels::copy_into(b.view, cb.view);
  return std::memcmp(ca.view.data, cb.view.data, static_cast<std::size_t>(ca.view.numel()) * itemsize(a.view.dtype)) == 0;
}

}  // namespace lt::oracle
