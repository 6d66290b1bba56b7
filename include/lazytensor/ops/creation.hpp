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

namespace lt::creation {

/// Checks that attrs hold at least the ints and exactly the floats an op reads.
inline void check_attr_count(const Attrs& a, std::size_t ints, std::size_t floats) {
  LT_CHECK(a.ints.size() >= ints && a.floats.size() == floats, "expected ", ints, " integer and ", floats,
           " floating attributes, got ", a.ints.size(), " and ", a.floats.size());
}

/// The dtype stored in attrs.ints[0]. A bf16 one is made in f32 and cast (lt::record).
inline DType attr_dtype(const Attrs& a) {
  auto t = static_cast<DType>(a.ints[0]);
  LT_CHECK(t <= DType::bf16, "dtype ", static_cast<int>(a.ints[0]), " is out of range");
  return t;
}

/// The shape stored in attrs.ints from `first` on.
inline Shape attr_shape(const Attrs& a, std::size_t first) {
  Shape s(std::span<const std::int64_t>(a.ints).subspan(first));
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
// attrs: ints {dtype, integer value, shape...}, floats {floating value}. Integer dtypes take the
// integer value, so large i64 values stay exact.

inline Meta full_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 2, 1);
  return {attr_shape(a, 2), attr_dtype(a)};
}

inline void full_kernel(std::span<const View>, const View& out, const Attrs& a) {
  visit(out.dtype, [&]<class T>(Tag<T>) {
    T value;
    if constexpr (std::is_same_v<T, bool>) value = a.f(0) != 0;
    else if constexpr (std::is_floating_point_v<T>) value = static_cast<T>(a.f(0));
    else value = static_cast<T>(a.i(1));
    T* d = out.ptr<T>();
    kernels::parallel_blocks(out.numel(), kernels::parallel_threshold,
                             [&](std::int64_t b, std::int64_t e) { std::fill(d + b, d + e, value); });
  });
}

// ---- arange ----------------------------------------------------------------------------------
// attrs: ints {dtype, integral, start, end, step}, floats {start, end, step}. With integral
// arguments the length and (for integer dtypes) the values are exact integer arithmetic.

inline std::int64_t arange_length(const Attrs& a) {
  if (a.i(1)) {
    std::int64_t start = a.i(2), end = a.i(3), step = a.i(4);
    LT_CHECK(step != 0, "step must be nonzero");
    LT_CHECK(step > 0 ? end >= start : end <= start, "the range from ", start, " to ", end,
             " is inconsistent with the sign of step ", step);
    // Unsigned, so that no span between two i64 values overflows.
    std::uint64_t span = step > 0 ? static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start)
                                  : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end);
    std::uint64_t stride = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
    return static_cast<std::int64_t>(span / stride + (span % stride != 0));
  }
  double start = a.f(0), end = a.f(1), step = a.f(2);
  LT_CHECK(std::isfinite(start) && std::isfinite(end), "start and end must be finite, got ", start, " and ", end);
  LT_CHECK(step != 0, "step must be nonzero");
  LT_CHECK(step > 0 ? end >= start : end <= start, "the range from ", start, " to ", end,
           " is inconsistent with the sign of step ", step);
  double n = std::ceil((end - start) / step);
  LT_CHECK(n < 0x1p62, "the range from ", start, " to ", end, " in steps of ", step, " is too long");
  return static_cast<std::int64_t>(n);
}

inline Meta arange_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 5, 3);
  DType t = attr_dtype(a);
  LT_CHECK(t != DType::boolean, "not supported for bool");
  return {Shape{arange_length(a)}, t};
}

inline void arange_kernel(std::span<const View>, const View& out, const Attrs& a) {
  visit(out.dtype, [&]<class T>(Tag<T>) {
    if (std::is_integral_v<T> && a.i(1)) {
      std::int64_t start = a.i(2), step = a.i(4);
      fill_each<T>(out, [&](std::int64_t i) { return static_cast<T>(start + i * step); });
    } else {
      double start = a.f(0), step = a.f(2);
      fill_each<T>(out, [&](std::int64_t i) { return static_cast<T>(start + static_cast<double>(i) * step); });
    }
  });
}

// ---- linspace --------------------------------------------------------------------------------
// attrs: ints {dtype, steps}, floats {start, end}.

inline Meta linspace_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 2, 2);
  DType t = attr_dtype(a);
  LT_CHECK(t != DType::boolean, "not supported for bool");
  LT_CHECK(a.i(1) >= 0, "the number of steps must be non-negative, got ", a.i(1));
  return {Shape{a.i(1)}, t};
}

/// As PyTorch: floating dtypes compute in their own type, integers in double (then truncate).
/// The first half counts up from start and the second down from end, so both ends are exact.
inline void linspace_kernel(std::span<const View>, const View& out, const Attrs& a) {
  visit(out.dtype, [&]<class T>(Tag<T>) {
    using Step = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    std::int64_t steps = a.i(1);
    auto start = static_cast<Step>(a.f(0)), end = static_cast<Step>(a.f(1));
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
// attrs: ints {dtype, rows, cols}.

inline Meta eye_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 3, 0);
  LT_CHECK(a.i(1) >= 0 && a.i(2) >= 0, "sizes must be non-negative, got n = ", a.i(1), ", m = ", a.i(2));
  return {Shape{a.i(1), a.i(2)}, attr_dtype(a)};
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
// Box-Muller pair of normals. attrs: ints {dtype, seed, offset, shape...}; randint adds
// {low, high} before the shape.

/// For each block b of the call, in parallel: emit(words of b, first element, element count).
template <class Emit>
void fill_blocks(const View& out, const Attrs& a, std::int64_t per_block, Emit emit) {
  auto seed = static_cast<std::uint64_t>(a.i(seed_slot)), offset = static_cast<std::uint64_t>(a.i(offset_slot));
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

inline Meta float_random_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 3, 0);
  DType t = attr_dtype(a);
  LT_CHECK(is_floating(t), "expected a floating dtype, got ", name(t));
  return {attr_shape(a, 3), t};
}

inline void rand_kernel(std::span<const View>, const View& out, const Attrs& a) {
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
  } else {
    double* d = out.ptr<double>();
    fill_blocks(out, a, 2, [d](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k) d[first + k] = unit_double(word_pair(w, 2 * k));
    });
  }
}

/// Box-Muller in double for both dtypes: r cos(theta) and r sin(theta), with the first
/// uniform moved to (0, 1] so that its log is finite.
inline void randn_kernel(std::span<const View>, const View& out, const Attrs& a) {
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

inline constexpr std::size_t randint_low_slot = 3, randint_high_slot = 4;

/// True when every integer in [lo, hi] is a value of dtype t.
inline bool holds_range(DType t, std::int64_t lo, std::int64_t hi) {
  switch (t) {
    case DType::boolean: return lo >= 0 && hi <= 1;
    case DType::i32: return lo >= std::numeric_limits<std::int32_t>::min() && hi <= std::numeric_limits<std::int32_t>::max();
    default: return true;
  }
}

inline Meta randint_infer(std::span<const Meta>, const Attrs& a) {
  check_attr_count(a, 5, 0);
  DType t = attr_dtype(a);
  std::int64_t low = a.i(randint_low_slot), high = a.i(randint_high_slot);
  LT_CHECK(low < high, "low must be less than high, got low = ", low, ", high = ", high);
  LT_CHECK(holds_range(t, low, high - 1), "the range [", low, ", ", high, ") does not fit in ", name(t));
  return {attr_shape(a, 5), t};
}

/// low + (64 random bits mod the range width), as PyTorch draws integers.
inline void randint_kernel(std::span<const View>, const View& out, const Attrs& a) {
  auto low = static_cast<std::uint64_t>(a.i(randint_low_slot));
  std::uint64_t width = static_cast<std::uint64_t>(a.i(randint_high_slot)) - low;
  visit(out.dtype, [&]<class T>(Tag<T>) {
    T* d = out.ptr<T>();
    fill_blocks(out, a, 2, [=](const Block& w, std::int64_t first, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k)
        d[first + k] = static_cast<T>(static_cast<std::int64_t>(low + word_pair(w, 2 * k) % width));
    });
  });
}

// The seed and the offset are data: each call draws anew without a new plan.
inline constexpr std::uint8_t random_value_ints = (1u << seed_slot) | (1u << offset_slot);
LT_DEFINE_OP(full, OpDesc{OpId::full, "full", OpKind::creation, 0, &full_infer, &full_kernel,
                             nullptr, nullptr, {}, /*value_ints=*/0b10});
LT_DEFINE_OP(arange, OpDesc{OpId::arange, "arange", OpKind::creation, 0, &arange_infer, &arange_kernel});
LT_DEFINE_OP(linspace, OpDesc{OpId::linspace, "linspace", OpKind::creation, 0, &linspace_infer, &linspace_kernel});
LT_DEFINE_OP(eye, OpDesc{OpId::eye, "eye", OpKind::creation, 0, &eye_infer, &eye_kernel});
// bf16 draws are made as bf16 (rand_kernel), so that none is 1.
LT_DEFINE_OP(rand, with_bf16(OpDesc{OpId::rand, "rand", OpKind::creation, 0, &float_random_infer, &rand_kernel,
                                       nullptr, nullptr, {}, random_value_ints},
                                Bf16Operands::storage));
LT_DEFINE_OP(randn, OpDesc{OpId::randn, "randn", OpKind::creation, 0, &float_random_infer, &randn_kernel,
                              nullptr, nullptr, {}, random_value_ints});
// randint's bounds {low, high} (ints 3 and 4) are data as well.
LT_DEFINE_OP(randint, OpDesc{OpId::randint, "randint", OpKind::creation, 0, &randint_infer, &randint_kernel,
                                nullptr, nullptr, {}, random_value_ints | 0b11000});

}  // namespace lt::creation
