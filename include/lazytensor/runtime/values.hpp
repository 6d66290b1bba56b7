#pragma once
// Reading values and moving them between devices.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/runtime/barrier.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
/// The value of `t` as a contiguous array of dtype `as`, counting a read from a lazy device.
inline Array read_contiguous(const Tensor& t, DType as) {
  Array a = materialize(t);
  if (t.device().is_lazy()) metrics::counter_handle("TransferFromDevice").add();
  if (a.view.contiguous() && a.view.dtype == as) return a;
  Array c = Array::empty(as, a.view.shape);
  if (c.view.numel() > 0) kernels::copy_into(a.view, c.view);
  return c;
}
}  // namespace detail

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

inline Tensor Tensor::cpu() const { return to(lt::cpu); }

inline Tensor Tensor::to(Device target) const {
  if (device() == target) return *this;
  Array a = device().is_lazy() ? detail::read_contiguous(*this, dtype()) : impl().data;
  if (target.is_lazy()) {
    metrics::counter_handle("TransferToDevice").add();
    // The device owns its copy: later writes to the source must not show through.
    Array copy = Array::empty(a.view.dtype, a.view.shape);
    if (copy.view.numel() > 0) kernels::copy_into(a.view, copy.view);
    a = copy;
  }
  return tensor_from_array(a, target);
}

namespace detail {
inline void print_element(std::ostream& os, const View& v, std::int64_t offset) {
  visit(v.dtype, [&]<class T>(Tag<T>) {
    T x = v.ptr<T>()[offset];
    if constexpr (std::is_same_v<T, bool>) os << (x ? "true" : "false");
    else if constexpr (std::is_floating_point_v<T>) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(x));
      os << buf;
    } else os << x;
  });
}
inline void print_dim(std::ostream& os, const View& v, int dim, std::int64_t offset, int indent) {
  constexpr std::int64_t edge = 3;  // elements shown at each end of a long dim
  if (dim == v.shape.rank()) return print_element(os, v, offset);
  std::int64_t n = v.shape[dim];
  os << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (n > 2 * edge + 1 && i == edge) {
      os << "...";
      i = n - edge - 1;
    } else {
      print_dim(os, v, dim + 1, offset + i * v.strides[dim], indent + 1);
    }
    if (i + 1 < n) os << (dim + 1 < v.shape.rank() ? ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ') : ", ");
  }
  os << ']';
}
}  // namespace detail

/// Prints the values (long dims abbreviated), then dtype, shape and device.
inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "<undefined tensor>";
  Array a = detail::read_contiguous(t, t.dtype());
  detail::print_dim(os, a.view, 0, 0, 0);
  return os << "\n<" << name(t.dtype()) << t.shape() << " on " << t.device() << ">";
}

}  // namespace lt
