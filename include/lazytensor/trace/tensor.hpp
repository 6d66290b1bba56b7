#pragma once
// lt::Tensor: a cheap, shared handle to a value on a device. On the eager device it holds the
// value; on a lazy device it holds the IR node that will compute it at the next barrier.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lazytensor/core/device.hpp"
#include "lazytensor/core/scalar.hpp"
#include "lazytensor/trace/elementwise_methods.hpp"
#include "lazytensor/trace/tensor_impl.hpp"

namespace lt {

template <const auto& Op, class... Operands> class Expr;  // trace/expression.hpp
template <class X> inline constexpr bool is_expr_v = false;
template <const auto& Op, class... Os> inline constexpr bool is_expr_v<Expr<Op, Os...>> = true;

class Tensor : public ElementwiseMethods<Tensor> {
 public:
  Tensor() = default;
  explicit Tensor(TensorImplPtr impl) : impl_(std::move(impl)) {}
  /// Records an expression that is going away (`x = x * 2`) as this tensor's new value, as
  /// `*this = Tensor(e)` does. Where no other handle shares this tensor's state, the state
  /// takes the new value itself: `x = f(x)` in a loop then makes no state per step. The
  /// expression's tensors may refer to the new value afterwards (it is moved from).
  template <class E>
    requires is_expr_v<E>
  Tensor& operator=(E&& e);  // trace/expression.hpp

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().meta.shape; }
  std::vector<std::int64_t> sizes() const { return shape().vec(); }
  std::int64_t size(std::int64_t dim) const { return shape()[wrap_dim(dim, dim_count())]; }
  int dim() const { return shape().rank(); }
  std::int64_t numel() const { return shape().numel(); }
  DType dtype() const { return impl().meta.dtype; }
  Device device() const { return impl().device; }
  const Meta& meta() const { return impl().meta; }
  TensorImpl& impl() const {
    LT_CHECK(impl_ != nullptr, "use of an undefined tensor");
    return *impl_;
  }
  const TensorImplPtr& impl_ptr() const { return impl_; }

  // Values. Reading runs whatever the value still needs (defined by the runtime).
  template <class T> T item() const;
  template <class T> std::vector<T> to_vector() const;
  /// The value on the eager device (counted as TransferFromDevice from a lazy one).
  Tensor cpu() const;
  /// The same value on `device` (counted as TransferToDevice to a lazy one).
  Tensor to(Device device) const;
  /// The value converted to `dtype`.
  Tensor to(DType dtype) const;
  /// Rebinds this tensor (every handle of it) to `value`'s value: an in-place update. The
  /// value's autograd history comes with it, except under lt::no_grad.
  void assign(const Tensor& value);
  /// The same value, cut from autograd: it does not require grad and shares the value.
  Tensor detach() const;

  // In place (defined in autograd/in_place.hpp): as `t += x`, the tensor (every handle of it)
  // is rebound to the result, which must have its shape and a dtype that casts to its dtype
  // (torch.can_cast), and takes the result's autograd history. A leaf that requires grad
  // refuses, as in PyTorch, outside lt::no_grad. The storage is not written: views of the
  // tensor, and memory it was made from (lt::from_blob), keep the old value.
  /// *this += alpha * other.
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);  ///< *this += alpha * other.
  /// *this -= alpha * other.
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);  ///< *this -= alpha * other.
  /// *this *= other.
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);  ///< *this *= other.
  /// *this /= other (true division: an integral tensor refuses, its quotient is floating).
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);  ///< *this /= other.

  // Reverse mode (defined by the autograd layer, autograd/).
  /// Marks a floating leaf as requiring (or no longer requiring) gradients; returns *this.
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  /// Whether the tensor was not made by an op that recorded autograd history.
  bool is_leaf() const;
  /// The gradient accumulated by backward(): undefined before the first one, and for tensors
  /// that are not leaves requiring grad. On a lazy device a pending value until the barrier.
  const Tensor& grad() const;
  /// The gradient itself, for resetting it: `t.mutable_grad() = {};`
  Tensor& mutable_grad();
  /// Accumulates d(this)/d(leaf) * gradient into each leaf's grad(). `gradient` may be left
  /// out for a one-element tensor (it is then 1). The recorded history is released unless
  /// retain_graph. On a lazy device this records the backward ops; the barrier runs them.
  void backward(const Tensor& gradient = {}, bool retain_graph = false) const;

  // Methods mirroring the free functions of trace/functions/ (LibTorch's names). Each is
  // defined beside its free function.
  // elementwise methods (relu, exp, clamp, pow, ...) come from ElementwiseMethods
  // reductions: every dim when none are given; `dims` may be negative
  Tensor sum() const;
  Tensor sum(Dims dims, bool keepdim = false) const;
  Tensor sum(std::int64_t dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(Dims dims, bool keepdim = false) const;
  Tensor mean(std::int64_t dim, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(Dims dims, bool keepdim = false) const;
  Tensor prod(std::int64_t dim, bool keepdim = false) const;
  Tensor amax() const;
  Tensor amax(Dims dims, bool keepdim = false) const;
  Tensor amax(std::int64_t dim, bool keepdim = false) const;
  Tensor amin() const;
  Tensor amin(Dims dims, bool keepdim = false) const;
  Tensor amin(std::int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;
  Tensor argmax(std::int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(std::int64_t dim, bool keepdim = false) const;
  // max and min (trace/functions/min_max.hpp)
  /// The largest element (NaN if any is NaN), as amax().
  Tensor max() const;
  /// The largest values along `dim` and their first indices (i64), as torch.max(dim, keepdim).
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;
  /// The elementwise maximum with `other`, as maximum().
  Tensor max(const Tensor& other) const;
  /// The smallest element (NaN if any is NaN), as amin().
  Tensor min() const;
  /// The smallest values along `dim` and their first indices (i64), as torch.min(dim, keepdim).
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;
  /// The elementwise minimum with `other`, as minimum().
  Tensor min(const Tensor& other) const;
  Tensor var(std::int64_t correction = 1) const;
  Tensor var(Dims dims, std::int64_t correction = 1, bool keepdim = false) const;
  Tensor std(std::int64_t correction = 1) const;
  Tensor std(Dims dims, std::int64_t correction = 1, bool keepdim = false) const;
  Tensor logsumexp(Dims dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(Dims dims, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(Dims dims, bool keepdim = false) const;
  // movement
  Tensor reshape(Shape shape) const;  // one extent may be -1
  Tensor view(Shape shape) const;     // as reshape, but the input must be viewable
  Tensor permute(Dims dims) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor t() const;
  Tensor expand(Shape shape) const;  // -1 keeps an extent
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
               std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor flip(Dims dims) const;
  Tensor index_select(std::int64_t dim, const Tensor& index) const;
  Tensor gather(std::int64_t dim, const Tensor& index) const;
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor tril(std::int64_t diagonal = 0) const;
  Tensor triu(std::int64_t diagonal = 0) const;
  Tensor contiguous() const;
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  // contractions
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;

 private:
  int dim_count() const { return shape().rank(); }
  TensorImplPtr impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace lt
