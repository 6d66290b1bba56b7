#pragma once
// The fused kernel of a fragment, instantiated from its skeleton: one pass over the elements,
// every op applied in registers. Ops whose functor has an exact packet form run on Eigen
// packets; the others run lane by lane with their scalar form, so the result is bitwise the
// one the ops give one by one (no a * b + c may become an FMA: the targets compile with
// -ffp-contract=off).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "lazytensor/expr/fragment_attrs.hpp"
#include "lazytensor/expr/tree.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::expr {

namespace detail {

/// Whether every op of skeleton S has a kernel for compute type T.
template <class S, class T> inline constexpr bool supports = true;
template <const auto& Op, class... Cs, class T>
inline constexpr bool supports<Apply<Op, Cs...>, T> =
    std::remove_cvref_t<decltype(Op)>::rule::template supports<T> && (supports<Cs, T> && ...);

/// The evaluator of skeleton S in compute type T. Built once per kernel call, in body order,
/// taking functor attributes and scalar values from the fragment's attributes.
template <class S, class T> struct Eval;

/// Where each slot's values start; element i of slot K is at[K][i].
template <class T, int N> struct Sources {
  const T* at[N];
  template <int K> T scalar(std::int64_t i) const { return at[K][i]; }
  template <int K> kernels::packet_t<T> packet(std::int64_t i) const {
    return Eigen::internal::ploadu<kernels::packet_t<T>>(at[K] + i);
  }
};

/// Sources some of whose slots read one value: such a slot points at a packet filled with it
/// and its `keep` mask is 0, so every element reads the packet's (no branch per packet).
template <class T, int N> struct SourcesWithUniform {
  const T* at[N];
  std::int64_t keep[N];  // ~0 for a slot of values, 0 for a uniform slot
  template <int K> T scalar(std::int64_t i) const { return at[K][i & keep[K]]; }
  template <int K> kernels::packet_t<T> packet(std::int64_t i) const {
    return Eigen::internal::ploadu<kernels::packet_t<T>>(at[K] + (i & keep[K]));
  }
};

template <int K, class T> struct Eval<Slot<K>, T> {
  explicit Eval(FragmentAttrsReader&, Attrs&) {}
  template <class Src> T scalar(const Src& src, std::int64_t i) const { return src.template scalar<K>(i); }
  template <class Src> kernels::packet_t<T> packet(const Src& src, std::int64_t i) const {
    return src.template packet<K>(i);
  }
};

template <class T> struct Eval<Const, T> {
  T value;
  explicit Eval(FragmentAttrsReader& r, Attrs& a) : value((r.next(a), read(a))) {}
  static T read(const Attrs& a) { return decode<ScalarAttrs>(a).template as<T>(); }
  template <class Src> T scalar(const Src&, std::int64_t) const { return value; }
  template <class Src> kernels::packet_t<T> packet(const Src&, std::int64_t) const {
    return Eigen::internal::pset1<kernels::packet_t<T>>(value);
  }
};

/// The type of a functor's form for a fixed last operand, where it is used.
template <class Fn, class T, bool Used> struct LastFormOf {
  struct type {};
};
template <class Fn, class T> struct LastFormOf<Fn, T, true> {
  using type = decltype(std::declval<const Fn&>().with_last(std::declval<T>()));
};

template <const auto& Op, class... Cs, class T> struct Eval<Apply<Op, Cs...>, T> {
  using Fn = typename std::remove_cvref_t<decltype(Op)>::functor;
  static constexpr std::size_t arity = sizeof...(Cs);
  // A binary op whose functor has a form for a fixed last operand (division by one divisor, a
  // maximum with one bound) takes a constant second operand in that form, built once.
  static constexpr bool const_last = [] {
    if constexpr (arity == 2) return std::is_same_v<std::tuple_element_t<1, std::tuple<Cs...>>, Const> && kernels::HasWithLast<Fn, T>;
    else return false;
  }();
  using LastForm = typename LastFormOf<Fn, T, const_last>::type;
  std::tuple<Eval<Cs, T>...> children;  // declared first: operands take their attributes first
  Fn fn;
  [[no_unique_address]] LastForm fn_last;

  // Braced initialisation evaluates left to right, which is body order.
  explicit Eval(FragmentAttrsReader& r, Attrs& a) : children{Eval<Cs, T>(r, a)...}, fn(make(r, a)), fn_last(make_last()) {}
  static Fn make(FragmentAttrsReader& r, Attrs& a) {
    if constexpr (reads_attrs<Op>) r.next(a);
    return kernels::make_functor<Fn>(a);
  }
  LastForm make_last() const {
    if constexpr (const_last) return fn.with_last(std::get<arity - 1>(children).value);
    else return {};
  }

  template <class Src> T scalar(const Src& src, std::int64_t i) const {
    return std::apply([&](const auto&... c) { return static_cast<T>(fn(c.scalar(src, i)...)); }, children);
  }

  template <class Src> kernels::packet_t<T> packet(const Src& src, std::int64_t i) const {
    using P = kernels::packet_t<T>;
    if constexpr (const_last) return fn_last.packet(std::get<0>(children).packet(src, i));
    else return std::apply(
        [&](const auto&... c) {
          if constexpr (requires { fn.packet(c.packet(src, i)...); }) {
            return fn.packet(c.packet(src, i)...);
          } else {  // lane by lane with the scalar form: exact for every functor
            constexpr int lanes = kernels::packet_lanes<T>;
            alignas(64) T args[sizeof...(Cs)][lanes];
            int k = 0;
            ((Eigen::internal::pstoreu(args[k++], c.packet(src, i))), ...);
            alignas(64) T r[lanes];
            for (int j = 0; j < lanes; ++j)
              r[j] = [&]<std::size_t... I>(std::index_sequence<I...>) { return static_cast<T>(fn(args[I][j]...)); }(
                  std::index_sequence_for<Cs...>{});
            return Eigen::internal::ploadu<P>(r);
          }
        },
        children);
  }
};

/// Room for the slots of skeleton S: at least one, for skeletons without slots.
template <class S> inline constexpr int slot_room = slot_count<S> > 0 ? slot_count<S> : 1;
/// The slots' sources of a skeleton.
template <class S, class T> using SourcesOf = Sources<T, slot_room<S>>;

/// dst[i] = e(src..., i) for i in [0, n); `stream`: packets stored past the caches (call
/// kernels::pk::stream_fence() after).
template <class S, class T, class Src>
void eval_range(const Eval<S, T>& shared, const Src& shared_src, T* dst, std::int64_t n, bool stream = false) {
  // Local copies: stores to dst could alias the evaluator's scalars and the sources as far as
  // the compiler knows, which would reload them on every packet.
  const Eval<S, T> e = shared;
  const Src src = shared_src;
  std::int64_t i = 0;
  if constexpr (std::is_floating_point_v<T>) {
    constexpr int lanes = kernels::packet_lanes<T>;
    if constexpr (lanes > 1) {
      if (stream) {
        for (; i < n && reinterpret_cast<std::uintptr_t>(dst + i) % (lanes * sizeof(T)) != 0; ++i) dst[i] = e.scalar(src, i);
        for (; i + lanes <= n; i += lanes) kernels::pk::stream_store(dst + i, e.packet(src, i));
      }
      for (; i + lanes <= n; i += lanes) Eigen::internal::pstoreu(dst + i, e.packet(src, i));
    }
  }
  for (; i < n; ++i) dst[i] = e.scalar(src, i);
}

template <class S, class T>
void run_fragment(std::span<const View> in, const View& out, const Attrs& attrs) {
  constexpr int slots = slot_count<S>;
  FragmentAttrsReader reader(attrs);
  Attrs scratch;
  const Eval<S, T> eval(reader, scratch);
  int input_of[slot_room<S>];
  for (int k = 0; k < slots; ++k) input_of[k] = reader.input_of(k);

  std::vector<kernels::Operand> ops;
  ops.reserve(in.size());
  constexpr std::size_t max_inputs = slot_room<S>;
  bool per_row[max_inputs] = {}, any_per_row = false;
  // Direct: every input a plain array of T in output order, or one value per innermost row.
  bool direct = out.dtype == dtype_v<T> && in.size() <= max_inputs;
  for (std::size_t j = 0; j < in.size(); ++j) {
    ops.emplace_back(in[j], out.shape);
    bool one = kernels::one_per_row(ops.back(), in[j], out.shape);
    if (j < max_inputs) per_row[j] = one;
    any_per_row = any_per_row || one;
    direct = direct && ((ops.back().dense && ops.back().dtype == dtype_v<T>) || one);
  }
  T* result = direct ? out.ptr<T>() : nullptr;
  // An output far larger than the caches is not read back from them: stream it.
  const bool stream = out.numel() * static_cast<std::int64_t>(sizeof(T)) >= kernels::streaming_store_bytes;
  kernels::parallel_for_each_block(out.numel(), op_count<S>, [&](std::int64_t begin, std::int64_t end) {
    SourcesOf<S, T> src;
    if (direct && !any_per_row) {
      for (int k = 0; k < slots; ++k) src.at[k] = reinterpret_cast<const T*>(ops[static_cast<std::size_t>(input_of[k])].data) + begin;
      eval_range(eval, src, result + begin, end - begin, stream);
      if (stream) kernels::pk::stream_fence();
      return;
    }
    if (direct) {
      kernels::for_each_row_run<T, max_inputs>(ops, std::span<const bool>(per_row, in.size()), out.shape, begin, end,
                                               [&](const T* const* inputs, std::int64_t b, std::int64_t n) {
        for (int k = 0; k < slots; ++k) src.at[k] = inputs[input_of[k]];
        eval_range(eval, src, result + b, n);
      });
      return;
    }
    alignas(64) T buf[slot_room<S>][kernels::chunk_size];
    alignas(64) T res[kernels::chunk_size];
    for (std::int64_t b = begin; b < end; b += kernels::chunk_size) {
      std::int64_t n = std::min(end, b + kernels::chunk_size) - b;
      for (std::size_t j = 0; j < ops.size(); ++j) kernels::load_chunk<T>(ops[j], out.shape, b, b + n, buf[j]);
      for (int k = 0; k < slots; ++k) src.at[k] = buf[input_of[k]];
      eval_range(eval, src, res, n);
      visit(out.dtype, [&]<class R>(Tag<R>) {
        R* d = out.ptr<R>() + b;
        for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<R>(res[i]);
      });
    }
  });
}

/// A fragment's evaluator with the input each of its slots reads: the state of its bound form.
template <class S, class T>
struct BoundFragment {
  Eval<S, T> eval;
  int input_of[slot_room<S>];
  int inputs;  // how many inputs the fragment reads

  static void map(const void* state, const void* const* src, void* dst, std::int64_t n, bool stream) {
    const auto& self = *static_cast<const BoundFragment*>(state);
    SourcesOf<S, T> in;
    for (int k = 0; k < slot_count<S>; ++k) in.at[k] = static_cast<const T*>(src[self.input_of[k]]);
    eval_range(self.eval, in, static_cast<T*>(dst), n, stream);
  }

  /// map where the last input is one value (src[last] points at it), read by the slots that
  /// read that input without a run of copies of it.
  static void map_uniform_last(const void* state, const void* const* src, void* dst, std::int64_t n, bool stream) {
    const auto& self = *static_cast<const BoundFragment*>(state);
    alignas(64) T repeated[kernels::packet_lanes<T>];
    std::fill_n(repeated, kernels::packet_lanes<T>, *static_cast<const T*>(src[self.inputs - 1]));
    SourcesWithUniform<T, slot_room<S>> in;
    for (int k = 0; k < slot_count<S>; ++k) {
      const bool uniform = self.input_of[k] == self.inputs - 1;
      in.at[k] = uniform ? repeated : static_cast<const T*>(src[self.input_of[k]]);
      in.keep[k] = uniform ? 0 : ~std::int64_t{0};
    }
    eval_range(self.eval, in, static_cast<T*>(dst), n, stream);
  }
};

}  // namespace detail

/// The bound form of fragment_kernel<S>, for inputs already read as its compute type.
template <class S>
bool fragment_bind(std::span<const Meta> in, const Meta& out, const Attrs& attrs, BoundKernel& into) {
  DType t = FragmentAttrsReader::compute(attrs);
  return kernels::visit_compute(t, [&]<class T>(Tag<T>) {
    using Bound = detail::BoundFragment<S, T>;
    if constexpr (detail::supports<S, T> && sizeof(Bound) <= BoundKernel::state_bytes &&
                  std::is_trivially_copy_constructible_v<Bound> && std::is_trivially_destructible_v<Bound>) {
      if (out.dtype != dtype_v<T>) return false;
      FragmentAttrsReader reader(attrs);
      Attrs scratch;
      auto* bound = ::new (static_cast<void*>(into.state))
          Bound{detail::Eval<S, T>(reader, scratch), {}, static_cast<int>(in.size())};
      for (int k = 0; k < slot_count<S>; ++k) bound->input_of[k] = reader.input_of(k);
      into.map = &Bound::map;
      if (!in.empty()) into.map_uniform_last = &Bound::map_uniform_last;
      into.input = dtype_v<T>;
      return true;
    } else {
      return false;
    }
  });
}

/// The kernel of every fragment of skeleton S.
template <class S>
void fragment_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  DType t = FragmentAttrsReader::compute(attrs);
  kernels::visit_compute(t, [&]<class T>(Tag<T>) {
    if constexpr (detail::supports<S, T>) detail::run_fragment<S, T>(in, out, attrs);
    else fail("fragment: no kernel for compute dtype ", name(t));
  });
}

}  // namespace lt::expr
