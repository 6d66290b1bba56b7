#pragma once
// Expression trees as types. A node type names its op (an elementwise descriptor of the op
// table) and holds its operands in a Boost.Hana tuple; a leaf is a tensor operand or a C++
// scalar. The compiler walks the type to number the tensor operands, to reduce the tree to
// a skeleton (leaves replaced by their slot), and from the skeleton to the fragment's body
// and structural hash. Expressions of the same structure share one skeleton, so they share
// one fused kernel whatever their operands are.
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include "lazytensor/core/hash.hpp"
#include "lazytensor/core/scalar.hpp"
#include "lazytensor/ops/elementwise_rules.hpp"
#include "lazytensor/ops/declarations.hpp"

namespace lt::expr {

namespace hana = boost::hana;

/// A C++ scalar operand inside an expression.
struct ScalarLeaf {
  template <scalar_like X>
  ScalarLeaf(X x) : value(x) {}  // NOLINT: implicit, so that expressions store operands in place
  Scalar value;
};

/// An expression node: `E::op` is an elementwise descriptor, `e.operands` a hana::tuple.
template <class E>
concept node = requires(const E& e) {
  E::op;
  e.operands;
};

template <class E> inline constexpr bool is_scalar_leaf = std::is_same_v<E, ScalarLeaf>;
/// Anything else inside an expression is a tensor operand.
template <class E> inline constexpr bool is_tensor_leaf = !node<E> && !is_scalar_leaf<E>;

/// Whether an op's functor is built from the op's attributes (gelu, softplus, clamp).
template <const auto& Op>
inline constexpr bool reads_attrs = std::is_constructible_v<typename std::remove_cvref_t<decltype(Op)>::functor, const Attrs&>;

// ---- skeletons: the structure of an expression, with its leaves numbered ----

template <int K> struct Slot {};  // tensor operand number K, in postfix order
struct Const {};                  // a scalar operand
template <const auto& Op, class... Children> struct Apply {};

/// Counts and skeleton of an expression type E whose first tensor operand is slot First.
template <class E> struct tree {  // a tensor operand
  static constexpr int tensors = 1;
  static constexpr int scalars = 0;
  static constexpr int ops = 0;
  template <int First> using skeleton = Slot<First>;
};
template <> struct tree<ScalarLeaf> {
  static constexpr int tensors = 0;
  static constexpr int scalars = 1;
  static constexpr int ops = 0;
  template <int> using skeleton = Const;
};

namespace detail {
template <const auto& Op, class Operands> struct node_tree;
template <const auto& Op, class... Xs> struct node_tree<Op, hana::tuple<Xs...>> {
  static constexpr int tensors = (0 + ... + tree<Xs>::tensors);
  static constexpr int scalars = (0 + ... + tree<Xs>::scalars);
  static constexpr int ops = 1 + (0 + ... + tree<Xs>::ops);
  /// Where each operand's tensors start, relative to the node's first.
  static constexpr std::array<int, sizeof...(Xs)> offsets = [] {
    std::array<int, sizeof...(Xs)> o{};
    int counts[] = {tree<Xs>::tensors..., 0}, next = 0;
    for (std::size_t k = 0; k < sizeof...(Xs); ++k) o[k] = std::exchange(next, next + counts[k]);
    return o;
  }();
  template <int First, std::size_t... I>
  static auto skeleton_of(std::index_sequence<I...>)
      -> Apply<Op, typename tree<Xs>::template skeleton<First + offsets[I]>...>;
  template <int First> using skeleton = decltype(skeleton_of<First>(std::index_sequence_for<Xs...>{}));
};
}  // namespace detail

template <node E>
struct tree<E> : detail::node_tree<E::op, std::remove_cvref_t<decltype(std::declval<const E&>().operands)>> {};

template <class E> using skeleton_t = typename tree<E>::template skeleton<0>;

/// Calls visit(x) on every operand and node of `e`, in postfix (evaluation) order.
template <class E, class Visit>
void walk_postfix(const E& e, Visit&& visit) {
  if constexpr (node<E>) hana::for_each(e.operands, [&](const auto& x) { walk_postfix(x, visit); });
  visit(e);
}

// ---- from a skeleton to a fragment body ----

namespace detail {
template <class S> struct steps_of;
template <int K> struct steps_of<Slot<K>> {
  static constexpr int count = 1;
  static constexpr void write(FragmentStep*& out) { *out++ = {nullptr, OpId{}, nullptr, static_cast<std::int16_t>(K), false}; }
};
template <> struct steps_of<Const> {
  static constexpr int count = 1;
  static constexpr void write(FragmentStep*& out) { *out++ = {&leaf::scalar, OpId::scalar, nullptr, -1, true}; }
};
template <const auto& Op, class... Cs> struct steps_of<Apply<Op, Cs...>> {
  using desc = std::remove_cvref_t<decltype(Op)>;
  using rule = typename desc::rule;
  static constexpr int count = 1 + (0 + ... + steps_of<Cs>::count);
  static constexpr void write(FragmentStep*& out) {
    (steps_of<Cs>::write(out), ...);
    *out++ = {&Op, desc::op_id, &rule::template compute<Meta>, -1, reads_attrs<Op>};
  }
};
}  // namespace detail

/// The fragment body of skeleton S: its steps in evaluation order.
template <class S>
inline constexpr auto body = [] {
  std::array<FragmentStep, detail::steps_of<S>::count> steps{};
  FragmentStep* out = steps.data();
  detail::steps_of<S>::write(out);
  return steps;
}();

/// The number of tensor operand slots and of ops in skeleton S. Steps are told apart by their
/// slot and id, not by comparing their pointers with nullptr, which GCC does not take as a
/// constant under -fsanitize=undefined: a slot has slot >= 0, a constant id scalar.
template <class S>
inline constexpr int slot_count = [] {
  int n = 0;
  for (const FragmentStep& s : body<S>) n += s.slot >= 0;
  return n;
}();
template <class S>
inline constexpr int op_count = [] {
  int n = 0;
  for (const FragmentStep& s : body<S>) n += s.slot < 0 && s.id != OpId::scalar;
  return n;
}();

/// The structural hash of skeleton S, from stable op ids and slot numbers only: the same in
/// every translation unit, build and run.
template <class S>
inline constexpr hash_t structural_hash = [] {
  hash_t h = static_combine(0, static_cast<std::uint64_t>(OpId::fragment));
  for (const FragmentStep& s : body<S>)
    h = static_combine(h, s.slot < 0 ? static_cast<std::uint64_t>(s.id) : 0x10000u + static_cast<std::uint64_t>(s.slot));
  return h;
}();

}  // namespace lt::expr
