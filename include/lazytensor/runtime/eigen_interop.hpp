#pragma once
// Tensors from and to Eigen matrices and vectors.
#include <Eigen/Core>

#include "lazytensor/runtime/values.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

/// A rank-2 tensor (rank 1 for a compile-time vector) holding a copy of `m`.
template <class Derived>
Tensor from_eigen(const Eigen::DenseBase<Derived>& m, Device device = cpu) {
  using T = typename Derived::Scalar;
  Shape shape = Derived::ColsAtCompileTime == 1 ? Shape{m.rows()} : Shape{m.rows(), m.cols()};
  Array a = Array::empty(dtype_v<T>, shape);
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(a.view.ptr<T>(), m.rows(), m.cols()) = m;
  if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add();
  return tensor_from_array(a, device);
}

/// The value of a rank-0, 1 or 2 tensor as a row-major Eigen matrix (a vector is a column).
template <class T>
Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> to_eigen(const Tensor& t) {
  LT_CHECK(t.dim() <= 2, "to_eigen: expected rank 0, 1 or 2 (operands: ", describe(t), ")");
  Array a = detail::read_contiguous(t, dtype_v<T>);
  Eigen::Index rows = t.dim() == 0 ? 1 : t.shape()[0], cols = t.dim() == 2 ? t.shape()[1] : 1;
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(a.view.ptr<T>(), rows, cols);
}

}  // namespace lt
