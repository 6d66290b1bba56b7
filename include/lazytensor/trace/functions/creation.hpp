#pragma once
// Creation: tensors from C++ data.
#include <vector>

#include "lazytensor/ops/creation.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

/// A tensor of `shape` holding a copy of `values` (row-major).
template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Device device = cpu) {
  LT_CHECK(static_cast<std::int64_t>(values.size()) == shape.numel(), "from_vector: ", values.size(),
           " values do not fill shape ", shape);
  Array a = Array::empty(dtype_v<T>, shape);
  std::copy(values.begin(), values.end(), a.view.ptr<T>());
  if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add();
  return tensor_from_array(a, device);
}

template <class T>
Tensor from_vector(const std::vector<T>& values, Device device = cpu) {
  return from_vector(values, Shape{static_cast<std::int64_t>(values.size())}, device);
}

}  // namespace lt
