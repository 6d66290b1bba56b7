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

/// A handle to a tensor on a device: copies share the value (as PyTorch's). On a lazy device an op records a
/// node and returns at once; the value is computed at a barrier (lt::sync()) or when read. Elementwise ops
/// return an lt::Expr, recorded when it becomes a Tensor.
class Tensor : public ElementwiseMethods<Tensor> {
 public:
  Tensor() = default;
  /// Wraps a tensor's state; for the library's own use.
  explicit Tensor(TensorImplPtr impl) : impl_(std::move(impl)) {}
  /// Records an expression that is going away (`x = x * 2`) as this tensor's new value, as
  /// `*this = Tensor(e)` does. Where no other handle shares this tensor's state, the state
  /// takes the new value itself: `x = f(x)` in a loop then makes no state per step. The
  /// expression's tensors may refer to the new value afterwards (it is moved from).
  template <class E>
    requires is_expr_v<E>
  Tensor& operator=(E&& e);  // trace/expression.hpp

  /// False for a default-constructed tensor (an undefined gradient, an absent bias).
  bool defined() const { return impl_ != nullptr; }
  /// The extents; known at once, without running anything.
  const Shape& shape() const { return impl().meta.shape; }
  /// The extents as a vector.
  std::vector<std::int64_t> sizes() const { return shape().vec(); }
  /// The extent of `dim` (negative counts from the end); raises lt::Error out of range.
  std::int64_t size(std::int64_t dim) const { return shape()[wrap_dim(dim, dim_count())]; }
  /// The rank.
  int dim() const { return shape().rank(); }
  /// The number of elements.
  std::int64_t numel() const { return shape().numel(); }
  /// The element type.
  DType dtype() const { return impl().meta.dtype; }
  /// The device it lives on.
  Device device() const { return impl().device; }
  /// Shape and dtype together.
  const Meta& meta() const { return impl().meta; }
  /// The shared state; raises lt::Error for an undefined tensor. For the library's own use.
  TensorImpl& impl() const {
    LT_CHECK(impl_ != nullptr, "use of an undefined tensor");
    return *impl_;
  }
  /// The shared state's pointer (null when undefined). For the library's own use.
  const TensorImplPtr& impl_ptr() const { return impl_; }

  // Values. Reading runs whatever the value still needs (defined by the runtime).
  /// The value of a one-element tensor as T; waits for (or runs) what computes it.
  template <class T> T item() const;
  /// Every element as T, in row-major order; waits for (or runs) what computes them.
  template <class T> std::vector<T> to_vector() const;
  /// The value on the eager device (counted as TransferFromDevice from a lazy one).
  Tensor cpu() const;
  /// The same value on `device` (counted as TransferToDevice to a lazy one).
  Tensor to(Device device) const;
  /// The value converted to `dtype`.
  Tensor to(DType dtype, Site site = Site::current()) const;
  /// Rebinds this tensor (every handle of it) to `value`'s value: an in-place update. The
  /// value's autograd history comes with it, except under lt::no_grad.
  void assign(const Tensor& value);
  /// The same value, cut from autograd: it does not require grad and shares the value.
  Tensor detach() const;

  // In place (defined in autograd/in_place_definitions.hpp): as `t += x`, the tensor (every handle of it)
  // is rebound to the result, which must have its shape and a dtype that casts to its dtype
  // (torch.can_cast), and takes the result's autograd history. A leaf that requires grad
  // refuses, as in PyTorch, outside lt::no_grad. The storage is not written: views of the
  // tensor, and memory it was made from (lt::from_blob), keep the old value.
  /// *this += alpha * other.
  Tensor& add_(const Tensor& other, Scalar alpha = 1, Site site = Site::current());
  /// *this += alpha * other.
  Tensor& add_(Scalar other, Scalar alpha = 1, Site site = Site::current());
  /// *this -= alpha * other.
  Tensor& sub_(const Tensor& other, Scalar alpha = 1, Site site = Site::current());
  /// *this -= alpha * other.
  Tensor& sub_(Scalar other, Scalar alpha = 1, Site site = Site::current());
  /// *this *= other.
  Tensor& mul_(const Tensor& other, Site site = Site::current());
  /// *this *= other.
  Tensor& mul_(Scalar other, Site site = Site::current());
  /// *this /= other (true division: an integral tensor refuses, its quotient is floating).
  Tensor& div_(const Tensor& other, Site site = Site::current());
  /// *this /= other (true division).
  Tensor& div_(Scalar other, Site site = Site::current());

  // Reverse mode (defined by the autograd layer, autograd/).
  /// Marks a floating leaf as requiring (or no longer requiring) gradients; returns *this.
  Tensor& requires_grad_(bool requires_grad = true);
  /// Whether backward() computes a gradient for this tensor or through it.
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
  void backward(const Tensor& gradient = {}, bool retain_graph = false, Site site = Site::current()) const;

  // Methods mirroring the free functions of trace/functions/ (LibTorch's names). Each is
  // defined beside its free function.
  // elementwise methods (relu, exp, clamp, pow, ...) come from ElementwiseMethods
  // reductions: every dim when none are given; `dims` may be negative
  /// The sum of every element (a zero-dim tensor).
  Tensor sum(Site site = Site::current()) const;
  /// The sum over `dims` (negative dims count from the end); keepdim keeps them as extent 1.
  Tensor sum(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// The sum over `dim`.
  Tensor sum(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The mean of every element.
  Tensor mean(Site site = Site::current()) const;
  /// The mean over `dims`.
  Tensor mean(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// The mean over `dim`.
  Tensor mean(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The product of every element.
  Tensor prod(Site site = Site::current()) const;
  /// The product over `dims`.
  Tensor prod(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// The product over `dim`.
  Tensor prod(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The largest element.
  Tensor amax(Site site = Site::current()) const;
  /// The largest element over `dims`.
  Tensor amax(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// The largest element over `dim`.
  Tensor amax(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The smallest element.
  Tensor amin(Site site = Site::current()) const;
  /// The smallest element over `dims`.
  Tensor amin(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// The smallest element over `dim`.
  Tensor amin(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The index (i64) of the largest element in the flattened tensor.
  Tensor argmax(Site site = Site::current()) const;
  /// The indices (i64) of the largest elements along `dim`.
  Tensor argmax(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The index (i64) of the smallest element in the flattened tensor.
  Tensor argmin(Site site = Site::current()) const;
  /// The indices (i64) of the smallest elements along `dim`.
  Tensor argmin(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  // max and min (trace/functions/min_max.hpp)
  /// The largest element (NaN if any is NaN), as amax().
  Tensor max(Site site = Site::current()) const;
  /// The largest values along `dim` and their first indices (i64), as torch.max(dim, keepdim).
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The elementwise maximum with `other`, as maximum().
  Tensor max(const Tensor& other, Site site = Site::current()) const;
  /// The smallest element (NaN if any is NaN), as amin().
  Tensor min(Site site = Site::current()) const;
  /// The smallest values along `dim` and their first indices (i64), as torch.min(dim, keepdim).
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  /// The elementwise minimum with `other`, as minimum().
  Tensor min(const Tensor& other, Site site = Site::current()) const;
  /// The variance of every element, divided by numel - correction (1: Bessel's).
  Tensor var(std::int64_t correction = 1, Site site = Site::current()) const;
  /// The variance over `dims`, divided by their count - correction.
  Tensor var(Dims dims, std::int64_t correction = 1, bool keepdim = false, Site site = Site::current()) const;
  /// The standard deviation of every element (see var).
  Tensor std(std::int64_t correction = 1, Site site = Site::current()) const;
  /// The standard deviation over `dims` (see var).
  Tensor std(Dims dims, std::int64_t correction = 1, bool keepdim = false, Site site = Site::current()) const;
  /// log(sum(exp(x))) over `dims`, computed without overflow.
  Tensor logsumexp(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// Whether every element is nonzero (a bool tensor).
  Tensor all(Site site = Site::current()) const;
  /// Whether every element over `dims` is nonzero.
  Tensor all(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  /// Whether any element is nonzero (a bool tensor).
  Tensor any(Site site = Site::current()) const;
  /// Whether any element over `dims` is nonzero.
  Tensor any(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  // movement
  /// The elements in a new shape of the same count; one extent may be -1. A view where the layout allows,
  /// else a copy.
  Tensor reshape(Shape shape, Site site = Site::current()) const;  // one extent may be -1
  /// As reshape, the name PyTorch gives a view (on a lazy device every value can be viewed).
  Tensor view(Shape shape, Site site = Site::current()) const;     // as reshape, but the input must be viewable
  /// The dims reordered: dim i of the result is dim dims[i] of this tensor (a view).
  Tensor permute(Dims dims, Site site = Site::current()) const;
  /// Dims dim0 and dim1 swapped (a view).
  Tensor transpose(std::int64_t dim0, std::int64_t dim1, Site site = Site::current()) const;
  /// The transpose of a tensor of rank 2 or less (transpose(0, -1)); raises lt::Error for a higher rank.
  Tensor t(Site site = Site::current()) const;
  /// Broadcast to `shape` without copying (a view); -1 keeps an extent, and new leading dims may be added.
  Tensor expand(Shape shape, Site site = Site::current()) const;  // -1 keeps an extent
  /// Every dim of extent 1 removed (a view).
  Tensor squeeze(Site site = Site::current()) const;
  /// Dim `dim` removed if its extent is 1 (a view).
  Tensor squeeze(std::int64_t dim, Site site = Site::current()) const;
  /// A dim of extent 1 inserted at `dim` (a view).
  Tensor unsqueeze(std::int64_t dim, Site site = Site::current()) const;
  /// Dims start_dim to end_dim merged into one.
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1, Site site = Site::current()) const;
  /// Elements start to end (exclusive; absent: the whole dim) every `step` along `dim`, as x[start:end:step]
  /// (a view).
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
               std::int64_t step = 1, Site site = Site::current()) const;
  /// `length` elements from `start` along `dim` (a view).
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length, Site site = Site::current()) const;
  /// Index `index` of `dim`, which is removed (a view).
  Tensor select(std::int64_t dim, std::int64_t index, Site site = Site::current()) const;
  /// The order of the elements reversed along each of `dims`.
  Tensor flip(Dims dims, Site site = Site::current()) const;
  /// Slices of `dim` at the positions in `index` (i32 or i64, rank 0 or 1), in that order.
  Tensor index_select(std::int64_t dim, const Tensor& index, Site site = Site::current()) const;
  /// out[i][j] = this[index[i][j]][j] for dim 0 (likewise for other dims), as torch.gather.
  Tensor gather(std::int64_t dim, const Tensor& index, Site site = Site::current()) const;
  /// A copy with each `src` element added at the position `index` gives along `dim`, as torch.scatter_add.
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src, Site site = Site::current()) const;
  /// The lower triangle of the last two dims, from `diagonal` down; the rest zero.
  Tensor tril(std::int64_t diagonal = 0, Site site = Site::current()) const;
  /// The upper triangle of the last two dims, from `diagonal` up; the rest zero.
  Tensor triu(std::int64_t diagonal = 0, Site site = Site::current()) const;
  /// The same values in a row-major layout (this tensor itself if it has one).
  Tensor contiguous(Site site = Site::current()) const;
  /// Views of `split_size` elements along `dim` (the last may be shorter).
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0, Site site = Site::current()) const;
  /// At most `chunks` pieces of equal size along `dim`, as torch.chunk (the last may be smaller, and there
  /// may be fewer).
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0, Site site = Site::current()) const;
  // contractions
  /// The matrix product with torch.matmul's rules: vectors, matrices and batches, broadcasting the batch
  /// dims.
  Tensor matmul(const Tensor& other, Site site = Site::current()) const;
  /// The product of two matrices.
  Tensor mm(const Tensor& other, Site site = Site::current()) const;
  /// The product of two batches of matrices, [B, n, m] x [B, m, p].
  Tensor bmm(const Tensor& other, Site site = Site::current()) const;
  /// The product of a matrix and a vector.
  Tensor mv(const Tensor& vec, Site site = Site::current()) const;

 private:
  int dim_count() const { return shape().rank(); }
  TensorImplPtr impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace lt
