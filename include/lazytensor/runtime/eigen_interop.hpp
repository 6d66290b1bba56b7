#pragma once
// Tensors from and to Eigen matrices and vectors: copies (from_eigen, to_eigen) and a map
// over a cpu tensor's own memory (as_eigen_map).
#include <Eigen/Core>

#include "lazytensor/runtime/values.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

/// A row-major dynamic Eigen matrix of T: what to_eigen returns and as_eigen_map maps.
template <class T>
using EigenMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The tag that lets to_eigen convert with loss: `lt::to_eigen<int>(t, lt::allow_lossy)`.
struct allow_lossy_t {
  explicit allow_lossy_t() = default;
};
/// The value of allow_lossy_t.
inline constexpr allow_lossy_t allow_lossy{};

/// Whether every value of dtype `from` is exactly a value of dtype `to`: bool into any
/// dtype, i32 into i64 and f64, f32 and bf16 into f32 and f64, and each dtype into itself.
constexpr bool converts_exactly(DType from, DType to) {
  if (from == to || from == DType::boolean) return true;
  switch (from) {
    case DType::i32: return to == DType::i64 || to == DType::f64;
    case DType::bf16:
    case DType::f16: return to == DType::f32 || to == DType::f64;
    case DType::f32: return to == DType::f64;
    default: return false;
  }
}

/// A rank-2 tensor (rank 1 for a compile-time vector) holding a copy of `m`.
template <class Derived>
Tensor from_eigen(const Eigen::DenseBase<Derived>& m, Device device = cpu) {
  using T = typename Derived::Scalar;
  Shape shape = Derived::ColsAtCompileTime == 1 ? Shape{m.rows()} : Shape{m.rows(), m.cols()};
  Array a = Array::empty(dtype_v<T>, shape);
  Eigen::Map<EigenMatrix<T>>(a.view.ptr<T>(), m.rows(), m.cols()) = m;
  if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add();
  return tensor_from_array(a, device);
}

/// A copy of the value of a rank-0, 1 or 2 tensor as a row-major Eigen matrix (a vector is a
/// column), converted to T where the conversion is exact (converts_exactly); a lossy one
/// (f32 into int, i64 into f64, ...) raises lt::Error: ask for it with to_eigen<T>(t, allow_lossy).
template <class T>
EigenMatrix<T> to_eigen(const Tensor& t, allow_lossy_t) {
  LT_CHECK(t.dim() <= 2, "to_eigen: expected rank 0, 1 or 2 (operands: ", describe(t), ")");
  Array a = detail::read_contiguous(t, dtype_v<T>);
  Eigen::Index rows = t.dim() == 0 ? 1 : t.shape()[0], cols = t.dim() == 2 ? t.shape()[1] : 1;
  return Eigen::Map<const EigenMatrix<T>>(a.view.ptr<T>(), rows, cols);
}
/// The exact form: see to_eigen(t, allow_lossy).
template <class T>
EigenMatrix<T> to_eigen(const Tensor& t) {
  LT_CHECK(converts_exactly(t.dtype(), dtype_v<T>), "to_eigen: converting ", name(t.dtype()), " to ", name(dtype_v<T>),
           " loses values; pass lt::allow_lossy to convert anyway (operands: ", describe(t), ")");
  return to_eigen<T>(t, allow_lossy);
}

/// A mutable Eigen view of a contiguous cpu tensor of rank 0, 1 or 2 and dtype exactly T
/// (row-major; a vector is a column): no copy. Writes through it change the tensor and every
/// tensor sharing its storage (views, detached copies, from_blob memory). The map is valid
/// while the tensor's storage lives; an in-place op on the tensor rebinds it to new storage,
/// which the map does not see. Anything else (a lazy tensor, another dtype, a strided view)
/// raises lt::Error: copy with to_eigen, or make it contiguous on cpu first.
template <class T>
Eigen::Map<EigenMatrix<T>> as_eigen_map(const Tensor& t) {
  LT_CHECK(t.defined(), "as_eigen_map: the tensor is undefined");
  LT_CHECK(!t.device().is_lazy(), "as_eigen_map: the tensor is on ", t.device(),
           ": map a cpu tensor (t.cpu() copies it there) (operands: ", describe(t), ")");
  LT_CHECK(t.dtype() == dtype_v<T>, "as_eigen_map: the tensor is ", name(t.dtype()), ", not ", name(dtype_v<T>),
           " (operands: ", describe(t), ")");
  LT_CHECK(t.dim() <= 2, "as_eigen_map: expected rank 0, 1 or 2 (operands: ", describe(t), ")");
  const Array& a = t.impl().data;
  LT_CHECK(a.defined() && a.view.contiguous(), "as_eigen_map: the tensor is not contiguous; use contiguous() (operands: ",
           describe(t), ")");
  Eigen::Index rows = t.dim() == 0 ? 1 : t.shape()[0], cols = t.dim() == 2 ? t.shape()[1] : 1;
  return Eigen::Map<EigenMatrix<T>>(a.view.ptr<T>(), rows, cols);
}

}  // namespace lt
