#pragma once
// Creation ops: full, arange, linspace, eye and the seeded random ops. They take no tensor
// inputs; everything they need (shape, dtype, values, seed) is in their attributes.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "lazytensor/core/random.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/random_attrs.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::creation {

/// A creation op's dtype, checked. A bf16 one is made in f32 and cast (lt::record).
inline DType checked_dtype(DType t) {
  LT_CHECK(is_dtype(t), "dtype ", static_cast<int>(t), " is out of range");
  return t;
}

/// A creation op's shape, checked.
inline Shape checked_shape(AttrWords extents) {
  Shape s(extents);
  for (std::int64_t e : s) LT_CHECK(e >= 0, "shape ", s, " has a negative extent");
  return s;
}

/// Calls f(i) for every element index of `out`, in parallel, with T the element type.
template <class T, class F>
void fill_each(const View& out, F&& f) {
  T* d = out.ptr<T>();
  kernels::parallel_for_each_block(out.numel(), 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) d[i] = f(i);
  });
}

// ---- full ------------------------------------------------------------------------------------
// FullAttrs: integer dtypes take the integer value, so large i64 values stay exact.

inline Meta full_infer(std::span<const Meta>, const Attrs& a) {
  auto f = decode<FullAttrs>(a);
  return {checked_shape(f.shape), checked_dtype(f.dtype)};
}

inline void full_kernel(std::span<const View>, const View& out, const Attrs& a) {
  auto f = decode<FullAttrs>(a);
  visit(out.dtype, [&]<class T>(Tag<T>) {
    T value;
    if constexpr (std::is_same_v<T, bool>) value = f.real != 0;
    else if constexpr (std::is_floating_point_v<T>) value = static_cast<T>(f.real);
    else value = static_cast<T>(f.integer.value);
    T* d = out.ptr<T>();
    kernels::parallel_blocks(out.numel(), kernels::parallel_threshold,
                             [&](std::int64_t b, std::int64_t e) { std::fill(d + b, d + e, value); });
  });
}

// ---- arange ----------------------------------------------------------------------------------
// ArangeAttrs: with integral arguments the length and (for integer dtypes) the values are
// exact integer arithmetic.

inline std::int64_t arange_length(const ArangeAttrs& a) {
  if (a.integral) {
    std::int64_t start = a.start, end = a.end, step = a.step;
    LT_CHECK(step != 0, "step must be nonzero");
    LT_CHECK(step > 0 ? end >= start : end <= start, "the range from ", start, " to ", end,
             " is inconsistent with the sign of step ", step);
    // Unsigned, so that no span between two i64 values overflows.
    std::uint64_t span = step > 0 ? static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start)
                                  : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end);
    std::uint64_t stride = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
    return static_cast<std::int64_t>(span / stride + (span % stride != 0));
  }
  double start = a.real_start, end = a.real_end, step = a.real_step;
  LT_CHECK(std::isfinite(start) && std::isfinite(end), "start and end must be finite, got ", start, " and ", end);
  LT_CHECK(step != 0, "step must be nonzero");
  LT_CHECK(step > 0 ? end >= start : end <= start, "the range from ", start, " to ", end,
           " is inconsistent with the sign of step ", step);
  double n = std::ceil((end - start) / step);
  LT_CHECK(n < 0x1p62, "the range from ", start, " to ", end, " in steps of ", step, " is too long");
  return static_cast<std::int64_t>(n);
}

inline Meta arange_infer(std::span<const Meta>, const Attrs& a) {
  auto r = decode<ArangeAttrs>(a);
  DType t = checked_dtype(r.dtype);
  LT_CHECK(t != DType::boolean, "not supported for bool");
  return {Shape{arange_length(r)}, t};
}

inline void arange_kernel(std::span<const View>, const View& out, const Attrs& a) {
  auto r = decode<ArangeAttrs>(a);
  visit(out.dtype, [&]<class T>(Tag<T>) {
    if (std::is_integral_v<T> && r.integral) {
      std::int64_t start = r.start, step = r.step;
      fill_each<T>(out, [&](std::int64_t i) { return static_cast<T>(start + i * step); });
    } else {
      double start = r.real_start, step = r.real_step;
      fill_each<T>(out, [&](std::int64_t i) { return static_cast<T>(start + static_cast<double>(i) * step); });
    }
  });
}

// ---- linspace --------------------------------------------------------------------------------
// LinspaceAttrs.

inline Meta linspace_infer(std::span<const Meta>, const Attrs& a) {
  auto l = decode<LinspaceAttrs>(a);
  DType t = checked_dtype(l.dtype);
  LT_CHECK(t != DType::boolean, "not supported for bool");
  LT_CHECK(l.steps >= 0, "the number of steps must be non-negative, got ", l.steps);
  return {Shape{l.steps}, t};
}

/// As PyTorch: floating dtypes compute in their own type, integers in double (then truncate).
/// The first half counts up from start and the second down from end, so both ends are exact.
inline void linspace_kernel(std::span<const View>, const View& out, const Attrs& a) {
  visit(out.dtype, [&]<class T>(Tag<T>) {
    using Step = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    auto l = decode<LinspaceAttrs>(a);
    std::int64_t steps = l.steps;
    auto start = static_cast<Step>(l.start), end = static_cast<Step>(l.end);
    if (steps == 1) {
      *out.ptr<T>() = static_cast<T>(start);
      return;
    }
    Step step = (end - start) / static_cast<Step>(steps - 1);
    std::int64_t halfway = steps / 2;
    fill_each<T>(out, [&](std::int64_t i) {
      return static_cast<T>(i < halfway ? start + step * static_cast<Step>(i)
                                        : end - step * static_cast<Step>(steps - 1 - i));
    });
  });
}

// ---- eye -------------------------------------------------------------------------------------
// EyeAttrs: rows and cols.

inline Meta eye_infer(std::span<const Meta>, const Attrs& a) {
  auto e = decode<EyeAttrs>(a);
  LT_CHECK(e.n >= 0 && e.m >= 0, "sizes must be non-negative, got n = ", e.n, ", m = ", e.m);
  return {Shape{e.n, e.m}, checked_dtype(e.dtype)};
}

inline void eye_kernel(std::span<const View>, const View& out, const Attrs&) {
  std::int64_t cols = out.shape[1];
  visit(out.dtype, [&]<class T>(Tag<T>) {
    fill_each<T>(out, [&](std::int64_t i) { return static_cast<T>(i / cols == i % cols); });
  });
}

// ---- random ----------------------------------------------------------------------------------
// A call draws Philox blocks offset, offset + 1, ... of the stream `seed` (core/random.hpp),
// each block giving the next few elements: four f32 uniforms (24 bits of a word each), or two
// f64 uniforms (53 bits of a word pair each), two integers (a word pair each), or one
// Box-Muller pair of normals (RandomAttrs; RandintAttrs for randint).

/// For each block b of the call, in parallel: emit(words of b, first element, element count).
template <class Emit>
void fill_blocks(const View& out, const RandomAttrs& a, std::int64_t per_block, Emit emit) {
  std::uint64_t seed = a.seed.value, offset = a.offset.value;
  std::int64_t n = out.numel();
  kernels::parallel_for_each_block((n + per_block - 1) / per_block, 32, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b) {
      std::int64_t first = b * per_block;
      emit(random_bits(seed, offset + static_cast<std::uint64_t>(b)), first, std::min(per_block, n - first));
    }
  });
}

using Block = std::array<std::uint32_t, 4>;

/// The 64 bits of words k and k + 1 of a block, low word first.
inline std::uint64_t word_pair(const Block& w, std::int64_t k) {
  return (static_cast<std::uint64_t>(w[k + 1]) << 32) | w[k];
}

/// A uniform double in [0, 1) from the top 53 of 64 random bits.
inline double unit_double(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

inline Meta float_random_infer(std::span<const Meta>, const Attrs& attrs) {
  auto a = decode<RandomAttrs>(attrs);
  DType t = checked_dtype(a.dtype);
  LT_CHECK(is_floating(t), "expected a floating dtype, got ", name(t));
  return {checked_shape(a.shape), t};
}

inline void rand_kernel(std::span<const View>, const View& out, const Attrs& attrs) {
  auto a = decode<RandomAttrs>(attrs);
  if (out.dtype == DType::f32) {
    float* d = out.ptr<float>();
    fill_blocks(out, a, 4, [d](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k) d[first + k] = static_cast<float>(w[k] >> 8) * 0x1p-24f;
    });
  } else if (out.dtype == DType::bf16) {
    // The f32 draw truncated to bf16, not rounded: a draw near 1 would round to 1.
    auto* d = out.ptr<bfloat16>();
    fill_blocks(out, a, 4, [d](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k)
        d[first + k] = bfloat16::from_bits(
            static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(w[k] >> 8) * 0x1p-24f) >> 16));
    });
  } else if (out.dtype == DType::f16) {
    // 11 bits of a word, as many as an f16 holds: every draw exact, none 1.
    auto* d = out.ptr<float16>();
    fill_blocks(out, a, 4, [d](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k) d[first + k] = float16(static_cast<float>(w[k] >> 21) * 0x1p-11f);
    });
  } else {
    double* d = out.ptr<double>();
    fill_blocks(out, a, 2, [d](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k) d[first + k] = unit_double(word_pair(w, 2 * k));
    });
  }
}

/// Box-Muller in double for both dtypes: r cos(theta) and r sin(theta), with the first
/// uniform moved to (0, 1] so that its log is finite.
inline void randn_kernel(std::span<const View>, const View& out, const Attrs& attrs) {
  auto a = decode<RandomAttrs>(attrs);
  auto run = [&]<class T>(Tag<T>) {
    T* d = out.ptr<T>();
    fill_blocks(out, a, 2, [d](const Block& w, std::int64_t first, std::int64_t count) {
      double radius = std::sqrt(-2.0 * std::log(1.0 - unit_double(word_pair(w, 0))));
      double theta = 2.0 * std::numbers::pi * unit_double(word_pair(w, 2));
      d[first] = static_cast<T>(radius * std::cos(theta));
      if (count > 1) d[first + 1] = static_cast<T>(radius * std::sin(theta));
    });
  };
  if (out.dtype == DType::f32) run(Tag<float>{});
  else run(Tag<double>{});
}

/// True when every integer in [lo, hi] is a value of dtype t.
inline bool holds_range(DType t, std::int64_t lo, std::int64_t hi) {
  switch (t) {
    case DType::boolean: return lo >= 0 && hi <= 1;
    case DType::i32: return lo >= std::numeric_limits<std::int32_t>::min() && hi <= std::numeric_limits<std::int32_t>::max();
    default: return true;
  }
}

inline Meta randint_infer(std::span<const Meta>, const Attrs& attrs) {
  auto a = decode<RandintAttrs>(attrs);
  DType t = checked_dtype(a.draw.dtype);
  std::int64_t low = a.low.value, high = a.high.value;
  LT_CHECK(low < high, "low must be less than high, got low = ", low, ", high = ", high);
  LT_CHECK(holds_range(t, low, high - 1), "the range [", low, ", ", high, ") does not fit in ", name(t));
  return {checked_shape(a.draw.shape), t};
}

/// low + (64 random bits mod the range width), as PyTorch draws integers.
inline void randint_kernel(std::span<const View>, const View& out, const Attrs& attrs) {
  auto a = decode<RandintAttrs>(attrs);
  auto low = static_cast<std::uint64_t>(a.low.value);
  std::uint64_t width = static_cast<std::uint64_t>(a.high.value) - low;
  visit(out.dtype, [&]<class T>(Tag<T>) {
    T* d = out.ptr<T>();
    fill_blocks(out, a.draw, 2, [=](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k)
        d[first + k] = static_cast<T>(static_cast<std::int64_t>(low + word_pair(w, 2 * k) % width));
    });
  });
}

LT_DEFINE_OP(full, OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &full_infer, .kernel = &full_kernel});
LT_DEFINE_OP(arange, OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &arange_infer, .kernel = &arange_kernel});
LT_DEFINE_OP(linspace,
             OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &linspace_infer, .kernel = &linspace_kernel});
LT_DEFINE_OP(eye, OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &eye_infer, .kernel = &eye_kernel});
// bf16 draws are made as bf16 (rand_kernel), so that none is 1.
LT_DEFINE_OP(rand, OpDesc{.kind = OpKind::creation,
                          .arity = 0,
                          .infer = &float_random_infer,
                          .kernel = &rand_kernel,
                          .bf16 = Bf16Operands::storage});
LT_DEFINE_OP(randn,
             OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &float_random_infer, .kernel = &randn_kernel});
LT_DEFINE_OP(randint,
             OpDesc{.kind = OpKind::creation, .arity = 0, .infer = &randint_infer, .kernel = &randint_kernel});

}  // namespace lt::creation
