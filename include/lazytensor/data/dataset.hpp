#pragma once
// Datasets: indexable collections of examples, read by a DataLoader.
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "lazytensor/data/example.hpp"

namespace lt::data {

/// `size()` examples, example i read with `get(i)` for i in [0, size()). A loader calls `get`
/// from its worker thread, so `get` must be safe to call on a const dataset from another thread.
template <class D>
concept Dataset = requires(const D& d, std::int64_t i) {
  { d.size() } -> std::convertible_to<std::int64_t>;
  { d.get(i) } -> Example;
};

/// The type of a dataset's examples.
template <Dataset D>
using example_t = std::remove_cvref_t<decltype(std::declval<const D&>().get(std::int64_t{0}))>;

namespace detail {
/// Row `i` of a cpu tensor: a view sharing its memory, built without recording an op.
inline Tensor row_view(const Tensor& t, std::int64_t i) {
  const Array& a = t.impl().data;
  Shape shape = a.view.shape;
  Strides strides = a.view.strides;
  std::byte* data = a.view.data + i * strides[0] * static_cast<std::int64_t>(itemsize(a.view.dtype));
  shape.erase(0);
  strides.erase(0);
  return tensor_from_array(a.alias(View{data, a.view.dtype, shape, strides}), cpu);
}

inline void check_index(std::string_view who, std::int64_t i, std::int64_t size) {
  LT_CHECK(i >= 0 && i < size, who, ": index ", i, " is out of range for a dataset of ", size, " examples");
}
}  // namespace detail

/// Examples that are rows of tensors: example i is {tensors[0][i], tensors[1][i], ...}, views
/// that share the tensors' memory. The tensors live on lt::cpu and agree in their first extent.
///
///   lt::data::TensorDataset dataset(images, labels);   // example: std::array<Tensor, 2>
template <std::size_t N>
class TensorDataset {
 public:
  static_assert(N > 0, "lt::data::TensorDataset: give it at least one tensor");

  /// Holds `tensors` (sharing their memory); raises lt::Error unless each is a defined cpu tensor of rank 1
  /// or more and their first extents agree.
  explicit TensorDataset(std::array<Tensor, N> tensors) : tensors_(std::move(tensors)) {
    for (std::size_t k = 0; k < N; ++k) {
      const Tensor& t = tensors_[k];
      LT_CHECK(t.defined(), "TensorDataset: tensor ", k, " is undefined");
      LT_CHECK(t.device() == cpu, "TensorDataset: tensor ", k, " is on ", t.device(), "; datasets hold cpu tensors");
      LT_CHECK(t.dim() >= 1, "TensorDataset: tensor ", k, " is ", describe(t), "; rows need rank 1 or more");
      LT_CHECK(t.size(0) == tensors_[0].size(0), "TensorDataset: tensor ", k, " is ", describe(t), " but tensor 0 is ",
               describe(tensors_[0]), "; their first extents must agree");
    }
  }
  /// Same as the array form: TensorDataset(images, labels).
  template <class... T>
    requires(sizeof...(T) == N && (std::same_as<std::remove_cvref_t<T>, Tensor> && ...))
  explicit TensorDataset(T&&... tensors) : TensorDataset(std::array<Tensor, N>{std::forward<T>(tensors)...}) {}

  /// The number of rows (examples).
  std::int64_t size() const { return tensors_[0].size(0); }

  /// Example `i`: row `i` of each tensor, as views; raises lt::Error for `i` out of range.
  std::array<Tensor, N> get(std::int64_t i) const {
    detail::check_index("TensorDataset::get", i, size());
    return map_tensors(tensors_, [&](const Tensor& t) { return detail::row_view(t, i); });
  }

  /// The tensors whose rows are the examples.
  const std::array<Tensor, N>& tensors() const { return tensors_; }

 private:
  std::array<Tensor, N> tensors_;
};

template <class... T>
  requires(std::same_as<std::remove_cvref_t<T>, Tensor> && ...)
TensorDataset(T&&...) -> TensorDataset<sizeof...(T)>;
template <std::size_t N>
TensorDataset(std::array<Tensor, N>) -> TensorDataset<N>;

/// `dataset` with `transform` applied to each example as it is read: the hook for
/// per-example work such as augmentation. `transform` runs on the loader's worker thread.
///
///   lt::data::MapDataset flipped(dataset, [](std::array<lt::Tensor, 2> e) { ... return e; });
template <Dataset D, class F>
  requires Example<std::invoke_result_t<const F&, example_t<D>>>
class MapDataset {
 public:
  /// Wraps `dataset` (held by value) with `transform`.
  MapDataset(D dataset, F transform) : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  /// The wrapped dataset's size.
  std::int64_t size() const { return static_cast<std::int64_t>(dataset_.size()); }
  /// transform(example i of the wrapped dataset).
  auto get(std::int64_t i) const { return transform_(dataset_.get(i)); }
  /// The wrapped dataset.
  const D& base() const { return dataset_; }

 private:
  D dataset_;
  F transform_;
};

}  // namespace lt::data
