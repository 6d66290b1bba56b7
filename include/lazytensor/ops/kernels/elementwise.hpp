#pragma once
// The elementwise engine: one kernel template serves every unary, binary and ternary op.
// An op is a functor plus a dtype rule; operands of any dtype, broadcast and strides are
// read in chunks of the compute type, so each op instantiates only per compute type.
#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <type_traits>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/bf16_map.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::kernels {

inline constexpr std::int64_t chunk_size = 512;

/// Whether operand `op` of `v` holds one value per innermost row of `out` (a broadcast scalar,
/// or a row statistic such as softmax's max), rather than being read in output order.
inline bool one_per_row(const Operand& op, const View& v, const Shape& out) {
  return !op.dense && (v.numel() == 1 || (out.rank() > 0 && op.strides[out.rank() - 1] == 0));
}

/// Calls body(src, b, n) over [begin, end) in runs that stay within one chunk and one block of
/// elements over which every one-per-row input is constant; src[k] points at the run's n
/// values of input k: in place for a plain array of Tc in output order, else (a one-per-row
/// input) a buffer filled with the block's value, refilled only when the value changes.
template <class Tc, std::size_t MaxInputs, class Body>
void for_each_row_run(std::span<const Operand> ops, std::span<const bool> per_row, const Shape& out,
                      std::int64_t begin, std::int64_t end, Body&& body) {
  alignas(64) Tc fill[MaxInputs][chunk_size];
  Tc value[MaxInputs];
  std::int64_t filled[MaxInputs] = {};  // leading elements of fill[k] holding value[k]
  const Tc* src[MaxInputs];
  // Runs end only where some one-per-row input may change: at the end of the trailing dims
  // along which each such input is constant (a channel's bias over [N, C, H, W] holds for H x W
  // values), so that its value is looked up once per such block, not once per row.
  std::int64_t inner = std::numeric_limits<std::int64_t>::max();
  ElementOffset at[MaxInputs];
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (!per_row[k]) continue;
    at[k] = ElementOffset(out, ops[k].strides);
    std::int64_t extent = 1;
    int d = out.rank() - 1;
    for (; d >= 0 && (ops[k].strides[d] == 0 || out[d] == 1); --d) extent *= out[d];
    if (d >= 0) inner = std::min(inner, std::max<std::int64_t>(extent, 1));
  }
  for (std::int64_t b = begin; b < end;) {
    const std::int64_t n = std::min({end - b, inner - b % inner, chunk_size});
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (!per_row[k]) {
        src[k] = reinterpret_cast<const Tc*>(ops[k].data) + b;
        continue;
      }
      const Tc v = load_one<Tc>(ops[k], at[k], b);
      // Compared as bits: -0 and +0 differ, and a NaN equals itself.
      if (filled[k] < n || std::memcmp(&v, &value[k], sizeof v) != 0) {
        std::fill_n(fill[k], n, v);
        filled[k] = n;
        value[k] = v;
      }
      src[k] = fill[k];
    }
    body(static_cast<const Tc* const*>(src), b, n);
    b += n;
  }
}

/// A functor that reads attributes is built from them; a plain one is default-built.
template <class Fn>
Fn make_functor(const Attrs& a) {
  if constexpr (std::is_constructible_v<Fn, const Attrs&>) return Fn(a);
  else return Fn{};
}

/// The type a kernel computes in for values of dtype t: bool and i32 widen to i64, so that
/// each op instantiates at most three compute types (which keeps the headers quick to build).
inline DType compute_dtype(DType t) { return is_floating(t) ? t : DType::i64; }

template <class F>
decltype(auto) visit_compute(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(Tag<float>{});
    case DType::f64: return f(Tag<double>{});
    default: return f(Tag<std::int64_t>{});
  }
}

/// The per-op part of an elementwise kernel: apply the functor over n contiguous values of
/// each input. Everything else (broadcast, strides, dtypes, threads) is shared code below,
/// so each op instantiates only this loop: that keeps the headers quick to build.
struct ApplyFn {
  /// `stream`: dst is stored past the caches (call pk::stream_fence() after).
  using Loop = void (*)(const void* const* src, void* dst, std::int64_t n, const void* functor, bool stream);
  Loop apply;
  DType compute;  // the type the inputs are read as
  DType result;   // the type apply writes
  const void* functor;
  /// apply where the last input is one value for all n (src's last entry points at it), for
  /// functors that have a faster form then (`with_last`); nullptr where they have none.
  Loop apply_uniform_last = nullptr;
};

/// A functor with a form for a fixed last operand: fn.with_last(b)(a...) == fn(a..., b), bit
/// for bit (division by one divisor, say, broadcasts it once instead of reading its copies).
template <class Fn, class Tc>
concept HasWithLast = requires(const Fn& fn, Tc b) { fn.with_last(b); };

/// Whether fn has a packet form over N packets of T, giving such a packet (spelled per arity: N
/// is at most max_elementwise_inputs). Named by T, not by the packet type: a vector type as a
/// template argument loses its attributes, and GCC warns of it in every file that includes this.
template <class Fn, class T, std::size_t N>
concept HasPacket =
    (N == 1 && requires(const Fn& fn, const packet_t<T>& p, packet_t<T>& out) { out = fn.packet(p); }) ||
    (N == 2 && requires(const Fn& fn, const packet_t<T>& p, packet_t<T>& out) { out = fn.packet(p, p); }) ||
    (N == 3 && requires(const Fn& fn, const packet_t<T>& p, packet_t<T>& out) { out = fn.packet(p, p, p); });

/// apply_each's packets, where fn has a packet form (it gives the scalar form's bits,
/// packet.hpp): d[i] from `i` on while a whole packet remains; returns where they end. A
/// function of its own, not a branch inside apply_each's lambda: clang instantiates the
/// discarded branch of an `if constexpr` there.
template <class Tc, class R, class Fn, std::size_t... I>
[[gnu::always_inline]] inline std::int64_t apply_packets(const Fn& fn, const Tc* const* s, R* d, std::int64_t i,
                                                         std::int64_t n, bool stream) {
  using P = packet_t<Tc>;
  if constexpr (std::is_same_v<R, Tc> && packet_lanes<Tc> > 1 && HasPacket<Fn, Tc, sizeof...(I)>) {
    if (stream) {
      for (; i < n && reinterpret_cast<std::uintptr_t>(d + i) % sizeof(P) != 0; ++i) d[i] = fn(s[I][i]...);
      for (; i + packet_lanes<Tc> <= n; i += packet_lanes<Tc>)
        pk::stream_store(d + i, fn.packet(Eigen::internal::ploadu<P>(s[I] + i)...));
    }
    for (; i + packet_lanes<Tc> <= n; i += packet_lanes<Tc>)
      Eigen::internal::pstoreu(d + i, fn.packet(Eigen::internal::ploadu<P>(s[I] + i)...));
  }
  return i;
}

/// d[i] = fn(s[0][i], ..., s[N-1][i]) for i < n, in packets where fn has a packet form;
/// `stream`: those packets stored past the caches (call pk::stream_fence() after).
template <class Tc, std::size_t N, class Fn>
[[gnu::always_inline]] inline void apply_each(const Fn& fn, const Tc* const* s, void* dst, std::int64_t n, bool stream = false) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    using R = decltype(fn(s[I][0]...));
    auto* d = static_cast<R*>(dst);
    std::int64_t i = apply_packets<Tc, R, Fn, I...>(fn, s, d, 0, n, stream);
    for (; i < n; ++i) d[i] = fn(s[I][i]...);
  }(std::make_index_sequence<N>{});
}

template <class Tc, std::size_t N, class Fn>
void apply_loop(const void* const* src, void* dst, std::int64_t n, const void* functor, bool stream = false) {
  const Tc* s[N];
  for (std::size_t k = 0; k < N; ++k) s[k] = static_cast<const Tc*>(src[k]);
  apply_each<Tc, N>(*static_cast<const Fn*>(functor), s, dst, n, stream);
}

template <class Tc, std::size_t N, class Fn>
void apply_uniform_last_loop(const void* const* src, void* dst, std::int64_t n, const void* functor, bool stream = false) {
  const Tc* s[N];
  for (std::size_t k = 0; k < N; ++k) s[k] = static_cast<const Tc*>(src[k]);
  apply_each<Tc, N - 1>(static_cast<const Fn*>(functor)->with_last(*s[N - 1]), s, dst, n, stream);
}

/// Whether Fn over Tc has a uniform-last loop. A bool, not a comparison of the loop's address
/// with nullptr, which GCC does not take as a constant under -fsanitize=undefined.
template <class Tc, std::size_t N, class Fn>
inline constexpr bool has_uniform_last_loop = N >= 2 && HasWithLast<Fn, Tc>;

/// The uniform-last loop of Fn over Tc, or nullptr where Fn has none.
template <class Tc, std::size_t N, class Fn>
constexpr ApplyFn::Loop uniform_last_loop() {
  if constexpr (has_uniform_last_loop<Tc, N, Fn>) return &apply_uniform_last_loop<Tc, N, Fn>;
  else return nullptr;
}

template <class Tc, std::size_t N, class Fn>
ApplyFn make_apply(const Fn& fn) {
  using R = decltype([]<std::size_t... I>(std::index_sequence<I...>, const Fn& f) {
    return f((static_cast<void>(I), Tc{})...);
  }(std::make_index_sequence<N>{}, fn));
  return {&apply_loop<Tc, N, Fn>, dtype_v<Tc>, dtype_v<R>, &fn, uniform_last_loop<Tc, N, Fn>()};
}

inline constexpr std::size_t max_elementwise_inputs = 3;

/// out = apply(in...) elementwise, with broadcasting, any strides and any input dtypes.
inline void map_elements(std::span<const View> in, const View& out, const ApplyFn& f) {
  std::size_t n_in = in.size();
  LT_CHECK(n_in <= max_elementwise_inputs, "elementwise ops take at most 3 inputs");
  Operand ops[max_elementwise_inputs] = {Operand(in[0], out.shape), Operand(in[n_in > 1 ? 1 : 0], out.shape),
                                         Operand(in[n_in > 2 ? 2 : 0], out.shape)};
  // Direct: every input is a plain array of the compute type in output order, or one value
  // per innermost row (a C++ scalar operand, or a row statistic such as softmax's max).
  bool direct = out.dtype == f.result, any_per_row = false;
  bool per_row[max_elementwise_inputs] = {};
  for (std::size_t k = 0; k < n_in; ++k) {
    per_row[k] = one_per_row(ops[k], in[k], out.shape);
    any_per_row = any_per_row || per_row[k];
    direct = direct && ((ops[k].dense && ops[k].dtype == f.compute) || per_row[k]);
  }
  std::size_t in_size = itemsize(f.compute), out_size = itemsize(out.dtype);
  // The last input one value per run: its faster form, where the functor has one.
  const bool uniform_last = f.apply_uniform_last != nullptr && per_row[n_in - 1];
  // An output far larger than the caches is not read back from them: stream it.
  const bool stream = out.numel() * static_cast<std::int64_t>(out_size) >= streaming_store_bytes;
  parallel_for_each_block(out.numel(), 1, [&](std::int64_t begin, std::int64_t end) {
    if (direct && !any_per_row) {  // one call over the block
      const void* src[max_elementwise_inputs];
      for (std::size_t k = 0; k < n_in; ++k) src[k] = ops[k].data + begin * static_cast<std::int64_t>(in_size);
      f.apply(src, out.data + begin * static_cast<std::int64_t>(out_size), end - begin, f.functor, stream);
      if (stream) pk::stream_fence();
      return;
    }
    if (direct) {
      visit_compute(f.compute, [&]<class Tc>(Tag<Tc>) {
        for_each_row_run<Tc, max_elementwise_inputs>(std::span(ops, n_in), std::span<const bool>(per_row, n_in), out.shape,
                                                     begin, end, [&](const Tc* const* src, std::int64_t b, std::int64_t n) {
          const void* s[max_elementwise_inputs] = {src[0], n_in > 1 ? src[1] : nullptr, n_in > 2 ? src[2] : nullptr};
          (uniform_last ? f.apply_uniform_last : f.apply)(s, out.data + b * static_cast<std::int64_t>(out_size), n, f.functor, false);
        });
      });
      return;
    }
    // Each input as cheaply as it allows: a plain array of the compute type in place, one
    // value (a scalar of another dtype, say) converted and spread once, the rest loaded (and
    // converted) chunk by chunk. A bool mask in where() is then the only input loaded.
    alignas(64) std::byte buf[max_elementwise_inputs][chunk_size * sizeof(double)];
    alignas(64) std::byte res[chunk_size * sizeof(double)];
    const void* src[max_elementwise_inputs] = {buf[0], buf[1], buf[2]};
    bool in_place[max_elementwise_inputs] = {}, loaded[max_elementwise_inputs] = {};
    for (std::size_t k = 0; k < n_in; ++k) {
      in_place[k] = ops[k].dense && ops[k].dtype == f.compute;
      loaded[k] = !in_place[k] && in[k].numel() != 1;
      if (in_place[k] || loaded[k]) continue;
      visit_compute(f.compute, [&]<class Tc>(Tag<Tc>) {
        Tc v;
        load_chunk<Tc>(ops[k], out.shape, begin, begin + 1, &v);
        std::fill_n(reinterpret_cast<Tc*>(buf[k]), chunk_size, v);
      });
    }
    const bool result_in_place = out.dtype == f.result;
    const ApplyFn::Loop apply =
        f.apply_uniform_last != nullptr && !in_place[n_in - 1] && !loaded[n_in - 1] ? f.apply_uniform_last : f.apply;
    for (std::int64_t b = begin; b < end; b += chunk_size) {
      std::int64_t n = std::min(end, b + chunk_size) - b;
      for (std::size_t k = 0; k < n_in; ++k) {
        if (in_place[k]) src[k] = ops[k].data + b * static_cast<std::int64_t>(in_size);
        if (loaded[k])
          visit_compute(f.compute, [&]<class Tc>(Tag<Tc>) {
            load_chunk<Tc>(ops[k], out.shape, b, b + n, reinterpret_cast<Tc*>(buf[k]));
          });
      }
      if (result_in_place) {
        apply(src, out.data + b * static_cast<std::int64_t>(out_size), n, f.functor, false);
        continue;
      }
      apply(src, res, n, f.functor, false);
      visit(f.result, [&]<class R>(Tag<R>) {
        const R* r = reinterpret_cast<const R*>(res);
        visit(out.dtype, [&]<class T>(Tag<T>) {
          T* d = out.ptr<T>() + b;
          for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(r[i]);
        });
      });
    }
  });
}

/// The kernel of an elementwise op: picks the compute type from the rule, then maps.
template <class Fn, class Rule, std::size_t N>
void elementwise_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  DType compute = compute_dtype(Rule::compute(in, out.dtype));
  Fn fn = make_functor<Fn>(attrs);
  visit_compute(compute, [&]<class Tc>(Tag<Tc>) {
    if constexpr (Rule::template supports<Tc>) map_elements(in, out, make_apply<Tc, N>(fn));
    else fail("no kernel for compute dtype ", name(compute));
  });
}

/// The bound form of elementwise_kernel<Fn, Rule, N>: the same compute type and functor, for
/// operands already read as the compute type.
template <class Fn, class Rule, std::size_t N>
bool elementwise_bind(std::span<const Meta> in, const Meta& out, const Attrs& attrs, BoundKernel& into) {
  DType compute = compute_dtype(Rule::compute(in, out.dtype));
  return visit_compute(compute, [&]<class Tc>(Tag<Tc>) {
    if constexpr (Rule::template supports<Tc> && sizeof(Fn) <= BoundKernel::state_bytes &&
                  std::is_trivially_copyable_v<Fn>) {
      Fn fn = make_functor<Fn>(attrs);
      if (make_apply<Tc, N>(fn).result != out.dtype) return false;
      ::new (static_cast<void*>(into.state)) Fn(fn);
      into.map = [](const void* state, const void* const* src, void* dst, std::int64_t n, bool stream) {
        apply_loop<Tc, N, Fn>(src, dst, n, state, stream);
      };
      if constexpr (has_uniform_last_loop<Tc, N, Fn>)
        into.map_uniform_last = [](const void* state, const void* const* src, void* dst, std::int64_t n, bool stream) {
          apply_uniform_last_loop<Tc, N, Fn>(src, dst, n, state, stream);
        };
      into.input = dtype_v<Tc>;
      if constexpr (std::is_same_v<Tc, float> && N <= 2 && HasPacket<Fn, float, N>) into.bf16_form = &bf16_form<Fn, N>;
      return true;
    } else {
      return false;
    }
  });
}

}  // namespace lt::kernels
