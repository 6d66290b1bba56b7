#pragma once
// An f32 elementwise op on bf16 values in one pass: each operand widened as it is loaded, the
// op applied in f32, its result rounded to bf16 as it is stored. The same bits as the op
// recorded on bf16 tensors (cast to f32, op, cast back), which a fused group otherwise runs
// as three passes: what the row loop runs for a bf16 op (row_loop_fuse.hpp).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/convert.hpp"
#include "lazytensor/ops/kernels/packet.hpp"

namespace lt::kernels {

namespace bf16_detail {

using P = packet_t<float>;
inline constexpr int lanes = packet_lanes<float>;
// The packet's lanes as integers, and as the bf16 halves of them (GCC vector extensions: one
// spelling for SSE, AVX and AVX-512).
using U32 = std::uint32_t __attribute__((vector_size(lanes * 4)));
using U16 = std::uint16_t __attribute__((vector_size(lanes * 2)));

/// `lanes` bf16 values at `s`, widened.
[[gnu::always_inline]] inline P load(const std::uint16_t* s) {
#if defined(__AVX512F__)
  if constexpr (lanes == 16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s))), 16));
#endif
  U16 h;
  std::memcpy(&h, s, sizeof h);
  const U32 w = __builtin_convertvector(h, U32) << 16;
  P p;
  std::memcpy(&p, &w, sizeof p);
  return p;
}

/// bf16_bits_of on every lane of p, stored at d: on the bits, in vector lanes.
[[gnu::always_inline]] inline void store_bits(std::uint16_t* d, const P& p) {
#if defined(__AVX512F__)
  if constexpr (lanes == 16) {  // spelled out: GCC makes slow code of the generic form here
    const __m512i u = _mm512_castps_si512(p);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(p, p, _CMP_UNORD_Q);
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x0040));
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtepi32_epi16(bits));
  }
#endif
  U32 u;
  std::memcpy(&u, &p, sizeof u);
  const U32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x0040u;
  const U32 nan = (U32)((u & 0x7fffffffu) > 0x7f800000u);  // NOLINT: a vector cast, all-ones lanes
  const U16 h = __builtin_convertvector((quiet & nan) | (rounded & ~nan), U16);
  std::memcpy(d, &h, sizeof h);
}

/// bf16_bits_of on every lane of p, stored at d. Where the CPU converts to bf16 in one
/// instruction (vcvtneps2bf16: nearest even, a NaN quietened as bfloat16 quietens it), that,
/// unless a lane is subnormal: the instruction flushes those to zero, and bfloat16 rounds them.
[[gnu::always_inline]] inline void store(std::uint16_t* d, const P& p) {
#if defined(__AVX512BF16__) && defined(__AVX512DQ__)
  if constexpr (lanes == 16) {
    if (_mm512_fpclass_ps_mask(p, 0x20) == 0) [[likely]] {  // 0x20: subnormal
      const __m256bh h = _mm512_cvtneps_pbh(p);
      std::memcpy(d, &h, sizeof h);
      return;
    }
  }
#endif
  store_bits(d, p);
}

/// d[i] = round(fn(widen(s[k][i]) or u[k]...)) for i < n: operand k is the one value u[k]
/// where bit k of Uniform is set, else a run of bf16 values.
template <class Fn, unsigned Uniform, std::size_t... K>
[[gnu::always_inline]] inline void run(const Fn& fn, const std::uint16_t* const* s, const float* u, std::uint16_t* d,
                                       std::int64_t n, std::index_sequence<K...>) {
  auto scalar = [&]<std::size_t k>(std::integral_constant<std::size_t, k>, std::int64_t i) {
    if constexpr ((Uniform >> k) & 1u) return u[k];
    else return std::bit_cast<float>(static_cast<std::uint32_t>(s[k][i]) << 16);
  };
  std::int64_t i = 0;
  if constexpr (lanes > 1) {
    const P splat[sizeof...(K)] = {Eigen::internal::pset1<P>(u[K])...};
    auto packet = [&]<std::size_t k>(std::integral_constant<std::size_t, k>, std::int64_t at) {
      if constexpr ((Uniform >> k) & 1u) return splat[k];
      else return load(s[k] + at);
    };
    for (; i + lanes <= n; i += lanes) store(d + i, fn.packet(packet(std::integral_constant<std::size_t, K>{}, i)...));
  }
  for (; i < n; ++i) d[i] = bf16_bits_of(fn(scalar(std::integral_constant<std::size_t, K>{}, i)...));
}

}  // namespace bf16_detail

/// The bf16 form of Fn over N operands as a bound map (BoundKernel::bf16_form): src[k] is a
/// run of bf16 values, or where bit k of Uniform is set one f32 value; dst a run of bf16.
template <class Fn, std::size_t N, unsigned Uniform>
void bf16_map(const void* state, const void* const* src, void* dst, std::int64_t n, bool stream) {
  const Fn fn = *static_cast<const Fn*>(state);  // a local copy: stores to dst may alias it
  const std::uint16_t* s[N];
  float u[N];
  for (std::size_t k = 0; k < N; ++k) {
    s[k] = static_cast<const std::uint16_t*>(src[k]);
    u[k] = ((Uniform >> k) & 1u) ? *static_cast<const float*>(src[k]) : 0.0f;
  }
  auto* d = static_cast<std::uint16_t*>(dst);
  if (!stream) return bf16_detail::run<Fn, Uniform>(fn, s, u, d, n, std::make_index_sequence<N>{});
  constexpr std::int64_t chunk = 1024;
  alignas(64) std::uint16_t buf[chunk];
  for (std::int64_t b = 0; b < n; b += chunk) {
    const std::int64_t m = std::min(chunk, n - b);
    const std::uint16_t* at[N];
    for (std::size_t k = 0; k < N; ++k) at[k] = ((Uniform >> k) & 1u) ? s[k] : s[k] + b;
    bf16_detail::run<Fn, Uniform>(fn, at, u, buf, m, std::make_index_sequence<N>{});
    pk::stream_copy(reinterpret_cast<std::byte*>(d + b), reinterpret_cast<const std::byte*>(buf),
                    static_cast<std::size_t>(m) * sizeof(std::uint16_t));
  }
}

/// The bf16 forms of Fn over N operands, one per set of uniform operands (not all of them);
/// nullptr for others. Unary and binary ops with a packet form have them.
template <class Fn, std::size_t N>
BoundKernel::Map bf16_form(unsigned uniform) {
  if constexpr (N == 1) {
    return uniform == 0 ? &bf16_map<Fn, 1, 0> : nullptr;
  } else if constexpr (N == 2) {
    switch (uniform) {
      case 0: return &bf16_map<Fn, 2, 0>;
      case 1: return &bf16_map<Fn, 2, 1>;
      case 2: return &bf16_map<Fn, 2, 2>;
      default: return nullptr;
    }
  } else {
    return nullptr;
  }
}

}  // namespace lt::kernels
