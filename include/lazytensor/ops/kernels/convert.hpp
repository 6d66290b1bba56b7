#pragma once
// Runs of values converted from one dtype to another exactly as a cast converts them
// (static_cast; bf16 through lt::bfloat16): the bound form of the cast op, through which fused
// groups that read or write bf16 run in the row loop. f32 <-> bf16, which bf16 work is made
// of, is written on the bits so that it vectorises: widening is a shift, narrowing is
// bfloat16::round (nearest even, a NaN kept quiet) with its branch made a select.
// (vcvtneps2bf16 is not used: it flushes subnormal inputs to zero, which bfloat16 does not.)
// f32 <-> f16 runs on F16C's conversions where the level has them (x86-64-v3 and up): they
// round as lt::float16 does, bit for bit, subnormals and NaNs included.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "lazytensor/core/bfloat16.hpp"
#include "lazytensor/core/float16.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/packet.hpp"

namespace lt::kernels {

/// bfloat16::round(f), without a branch: the same bits for every f32, NaNs included.
[[gnu::always_inline]] inline std::uint16_t bf16_bits_of(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x0040u;
  return static_cast<std::uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

/// f16 values widened to f32, exactly.
inline void widen_f16_run(const float16* s, float* d, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(d + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

/// f32 values rounded to f16, to nearest even.
inline void narrow_f16_run(const float* s, float16* d, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm512_cvtps_ph(_mm512_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) d[i] = float16(s[i]);
}

/// d[i] = static_cast<To>(s[i]) for i < n, as load_chunk converts.
template <class From, class To>
void convert_run(const From* s, To* d, std::int64_t n) {
  if constexpr (std::is_same_v<From, float16> && std::is_same_v<To, float>) {
    widen_f16_run(s, d, n);
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, float16>) {
    narrow_f16_run(s, d, n);
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, bfloat16>) {
    auto* out = reinterpret_cast<std::uint16_t*>(d);
    for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_bits_of(s[i]);
  } else if constexpr (std::is_same_v<From, bfloat16> && std::is_same_v<To, float>) {
    const auto* in = reinterpret_cast<const std::uint16_t*>(s);
    for (std::int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<float>(static_cast<std::uint32_t>(in[i]) << 16);
  } else {
    for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<To>(s[i]);
  }
}

/// convert_run as a bound map; `stream`: dst is a result far larger than the caches, written
/// past them a chunk at a time (stream_fence() after).
template <class From, class To>
void convert_map(const void*, const void* const* src, void* dst, std::int64_t n, bool stream) {
  const auto* s = static_cast<const From*>(src[0]);
  auto* d = static_cast<To*>(dst);
  if (!stream) return convert_run(s, d, n);
  constexpr std::int64_t chunk = 1024;
  alignas(64) To buf[chunk];
  for (std::int64_t b = 0; b < n; b += chunk) {
    const std::int64_t m = std::min(chunk, n - b);
    convert_run(s + b, buf, m);
    pk::stream_copy(reinterpret_cast<std::byte*>(d + b), reinterpret_cast<const std::byte*>(buf),
                    static_cast<std::size_t>(m) * sizeof(To));
  }
}

/// f32 values rounded to bf16 and widened again, as a bound map: a narrowing whose every
/// reader widens at once (a bf16 op's result read by the next op) is this, in place.
inline void bf16_round_trip_map(const void*, const void* const* src, void* dst, std::int64_t n, bool) {
  const auto* s = static_cast<const float*>(src[0]);
  auto* d = static_cast<float*>(dst);
  for (std::int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<float>(static_cast<std::uint32_t>(bf16_bits_of(s[i])) << 16);
}

/// Binds a conversion from in[0]'s dtype to out's: every pair of dtypes has one.
inline bool convert_bind(std::span<const Meta> in, const Meta& out, const Attrs&, BoundKernel& into) {
  if (in.size() != 1) return false;
  visit_storage(in[0].dtype, [&]<class From>(Tag<From>) {
    visit_storage(out.dtype, [&]<class To>(Tag<To>) { into.map = &convert_map<From, To>; });
  });
  into.map_uniform_last = nullptr;
  into.input = in[0].dtype;
  into.result = out.dtype;
  into.converts = true;
  return true;
}

}  // namespace lt::kernels
