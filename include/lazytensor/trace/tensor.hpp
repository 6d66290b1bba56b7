#pragma once
// lt::Tensor: a cheap, shared handle to a value on a device. On the eager device it holds the
// value; on a lazy device it holds the IR node that will compute it at the next barrier.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "lazytensor/core/device.hpp"
#include "lazytensor/core/scalar.hpp"
#include "lazytensor/trace/elementwise_methods.hpp"
#include "lazytensor/trace/tensor_impl.hpp"

namespace lt {

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
  Tensor to(DType dtype, Site site = Site::current()) const;
  /// Rebinds this tensor (every handle of it) to `value`'s value: an in-place update. The
  /// value's autograd history comes with it, except under lt::no_grad.
  void assign(const Tensor& value);
  /// The same value, cut from autograd: it does not require grad and shares the value.
  Tensor detach() const;

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
  void backward(const Tensor& gradient = {}, bool retain_graph = false, Site site = Site::current()) const;

  // Methods mirroring the free functions of trace/functions/ (LibTorch's names). Each is
  // defined beside its free function.
  // elementwise methods (relu, exp, clamp, pow, ...) come from ElementwiseMethods
  // reductions: every dim when none are given; `dims` may be negative
  Tensor sum(Site site = Site::current()) const;
  Tensor sum(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor sum(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor mean(Site site = Site::current()) const;
  Tensor mean(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor mean(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor prod(Site site = Site::current()) const;
  Tensor prod(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor prod(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor amax(Site site = Site::current()) const;
  Tensor amax(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor amax(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor amin(Site site = Site::current()) const;
  Tensor amin(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor amin(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor argmax(Site site = Site::current()) const;
  Tensor argmax(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor argmin(Site site = Site::current()) const;
  Tensor argmin(std::int64_t dim, bool keepdim = false, Site site = Site::current()) const;
  Tensor var(std::int64_t correction = 1, Site site = Site::current()) const;
  Tensor var(Dims dims, std::int64_t correction = 1, bool keepdim = false, Site site = Site::current()) const;
  Tensor std(std::int64_t correction = 1, Site site = Site::current()) const;
  Tensor std(Dims dims, std::int64_t correction = 1, bool keepdim = false, Site site = Site::current()) const;
  Tensor logsumexp(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor all(Site site = Site::current()) const;
  Tensor all(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  Tensor any(Site site = Site::current()) const;
  Tensor any(Dims dims, bool keepdim = false, Site site = Site::current()) const;
  // movement
  Tensor reshape(Shape shape, Site site = Site::current()) const;  // one extent may be -1
  Tensor view(Shape shape, Site site = Site::current()) const;     // as reshape, but the input must be viewable
  Tensor permute(Dims dims, Site site = Site::current()) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1, Site site = Site::current()) const;
  Tensor t(Site site = Site::current()) const;
  Tensor expand(Shape shape, Site site = Site::current()) const;  // -1 keeps an extent
  Tensor squeeze(Site site = Site::current()) const;
  Tensor squeeze(std::int64_t dim, Site site = Site::current()) const;
  Tensor unsqueeze(std::int64_t dim, Site site = Site::current()) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1, Site site = Site::current()) const;
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
               std::int64_t step = 1, Site site = Site::current()) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length, Site site = Site::current()) const;
  Tensor select(std::int64_t dim, std::int64_t index, Site site = Site::current()) const;
  Tensor flip(Dims dims, Site site = Site::current()) const;
  Tensor index_select(std::int64_t dim, const Tensor& index, Site site = Site::current()) const;
  Tensor gather(std::int64_t dim, const Tensor& index, Site site = Site::current()) const;
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src, Site site = Site::current()) const;
  Tensor tril(std::int64_t diagonal = 0, Site site = Site::current()) const;
  Tensor triu(std::int64_t diagonal = 0, Site site = Site::current()) const;
  Tensor contiguous(Site site = Site::current()) const;
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0, Site site = Site::current()) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0, Site site = Site::current()) const;
  // contractions
  Tensor matmul(const Tensor& other, Site site = Site::current()) const;
  Tensor mm(const Tensor& other, Site site = Site::current()) const;
  Tensor bmm(const Tensor& other, Site site = Site::current()) const;
  Tensor mv(const Tensor& vec, Site site = Site::current()) const;

 private:
  int dim_count() const { return shape().rank(); }
  TensorImplPtr impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace lt
