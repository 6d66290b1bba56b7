#pragma once
// Reading values. Moving them between devices and printing them are defined once per program,
// with the rest of the runtime (runtime/definitions.hpp).
#include <vector>

#include "lazytensor/runtime/api.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

template <class T>
T Tensor::item() const {
  LT_CHECK(numel() == 1, "item: expected a tensor with one element (operands: ", describe(*this), ")");
  return *detail::read_contiguous(*this, dtype_v<T>).view.template ptr<T>();
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Array a = detail::read_contiguous(*this, dtype_v<T>);
  const T* p = a.view.template ptr<T>();
  return std::vector<T>(p, p + a.view.numel());
}

}  // namespace lt
