#pragma once
// Examples and batches. A dataset item is one Tensor or a tuple-like of Tensors (std::pair,
// std::tuple, std::array), so that `auto [x, y] = example` works; a batch has the same type,
// each field stacked along a new leading dim.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::data {

namespace detail {
template <class E>
concept TupleLike = requires { std::tuple_size<E>::value; };

template <class E, std::size_t... K>
constexpr bool all_fields_are_tensors(std::index_sequence<K...>) {
  return (std::same_as<std::remove_cv_t<std::tuple_element_t<K, E>>, Tensor> && ...);
}

template <class E>
concept ExampleType =
    std::same_as<E, Tensor> ||
    (TupleLike<E> && all_fields_are_tensors<E>(std::make_index_sequence<std::tuple_size_v<E>>{}));
}  // namespace detail

/// One Tensor, or a std::pair / std::tuple / std::array of Tensors (references and const
/// are looked through).
template <class E>
concept Example = detail::ExampleType<std::remove_cvref_t<E>>;

/// The number of tensors in an example of type `E`.
template <Example E>
constexpr std::size_t field_count() {
  using T = std::remove_cvref_t<E>;
  if constexpr (std::same_as<T, Tensor>) return 1;
  else return std::tuple_size_v<T>;
}

/// Field `k` of an example.
template <std::size_t K, Example E>
const Tensor& field(const E& e) {
  if constexpr (std::same_as<E, Tensor>) return e;
  else return std::get<K>(e);
}

/// The example with `f` applied to each of its tensors.
template <Example E, class F>
E map_tensors(const E& e, F&& f) {
  if constexpr (std::same_as<E, Tensor>) return f(e);
  else return std::apply([&](const auto&... t) { return E{f(t)...}; }, e);
}

namespace detail {
/// Field `k` of every example, stacked into one fresh contiguous cpu tensor [n, ...]. The
/// values are copied straight into place: no op is recorded or counted.
template <std::size_t K, class E>
Tensor stack_field(std::span<const E> examples) {
  const Tensor& first = field<K>(examples[0]);
  auto check = [&](const Tensor& t, std::size_t i) {
    LT_CHECK(t.defined(), "collate: field ", K, " of example ", i, " is an undefined tensor");
    LT_CHECK(t.device() == cpu, "collate: field ", K, " of example ", i, " is on ", t.device(),
             "; datasets give tensors on cpu (a DeviceLoader moves batches to a device)");
    LT_CHECK(t.shape() == first.shape() && t.dtype() == first.dtype(), "collate: field ", K, " of example ", i, " is ",
             describe(t), " but that of example 0 is ", describe(first), "; a batch stacks equal shapes");
  };
  check(first, 0);
  Shape shape = first.shape();
  LT_CHECK(shape.rank() < max_rank, "collate: field ", K, " has rank ", shape.rank(),
           "; a batch of it would exceed the maximum rank ", max_rank);
  shape.insert(0, static_cast<std::int64_t>(examples.size()));
  Array out = Array::empty(first.dtype(), shape);
  const std::int64_t row_bytes = first.numel() * static_cast<std::int64_t>(itemsize(first.dtype()));
  const Strides row_strides = contiguous_strides(first.shape());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = field<K>(examples[i]);
    check(t, i);
    View row{out.view.data + static_cast<std::int64_t>(i) * row_bytes, t.dtype(), t.shape(), row_strides};
    kernels::copy_strided(t.impl().data.view, row);
  }
  return tensor_from_array(std::move(out), cpu);
}
}  // namespace detail

/// A batch of `examples`: each field stacked along a new leading dim, on lt::cpu. Every
/// example must give each field the same shape and dtype.
template <Example E>
E collate(std::span<const E> examples) {
  LT_CHECK(!examples.empty(), "collate: a batch needs at least one example");
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    if constexpr (std::same_as<E, Tensor>) return detail::stack_field<0>(examples);
    else return E{detail::stack_field<K>(examples)...};
  }(std::make_index_sequence<field_count<E>()>{});
}

}  // namespace lt::data
