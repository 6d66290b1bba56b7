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

#if defined(__AVX512F__) && defined(__AVX512DQ__)
/// Every lane of p rounded to bf16 in its high half, its low half left as it falls: nearest
/// even on the bits, as bf16_bits_of rounds a lane that is not NaN.
[[gnu::always_inline]] inline __m512i round_high(const __m512 p) {
  const __m512i u = _mm512_castps_si512(p);
  const __mmask16 odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
  const __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
  return _mm512_mask_add_epi32(r, odd, u, _mm512_set1_epi32(0x8000));
}
/// round_high, and a NaN lane quietened as bf16_bits_of quietens it.
[[gnu::always_inline]] inline __m512i round_high_nan(const __m512 p) {
  const __mmask16 nan = _mm512_cmp_ps_mask(p, p, _CMP_UNORD_Q);
  return _mm512_mask_or_epi32(round_high(p), nan, _mm512_castps_si512(p), _mm512_set1_epi32(0x00400000));
}

/// 32 bf16 values as two packets without a shuffle: lane j of the first holds value 2j, of the
/// second value 2j + 1. An elementwise op applied lane by lane to both halves of each operand
/// gives its results in the same halves, which store_halves interleaves back.
[[gnu::always_inline]] inline __m512 even_half(const __m512i x) { return _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)); }
[[gnu::always_inline]] inline __m512 odd_half(const __m512i x) {
  return _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}
/// The high halves of `even` and `odd` (even_half's and odd_half's order) stored as 32 values;
/// `Stream`: past the caches, d aligned to 64 bytes.
template <bool Stream>
[[gnu::always_inline]] inline void store_high_halves(std::uint16_t* d, const __m512i even, const __m512i odd) {
  // 0xe4: where the third operand's bit is set the first operand's bit, else the second's.
  const __m512i bits = _mm512_ternarylogic_epi32(odd, _mm512_srli_epi32(even, 16),
                                                 _mm512_set1_epi32(static_cast<int>(0xffff0000u)), 0xe4);
  if constexpr (Stream) _mm512_stream_si512(reinterpret_cast<__m512i*>(d), bits);
  else _mm512_storeu_si512(d, bits);
}
/// bf16_bits_of on the lanes of `even` and `odd`, stored as 32 values at d. Where no lane is
/// NaN, the rounding needs no NaN fix: one test of both packets for NaN, not a fix per packet.
/// `exact`: every lane is a bf16 value already (an op that selects among bf16 operands), and
/// only a NaN may need quietening.
template <bool Exact, bool Stream>
[[gnu::always_inline]] inline void store_halves(std::uint16_t* d, const __m512 even, const __m512 odd) {
  if ((_mm512_fpclass_ps_mask(even, 0x81) | _mm512_fpclass_ps_mask(odd, 0x81)) == 0) [[likely]] {  // 0x81: NaN
    if constexpr (Exact) store_high_halves<Stream>(d, _mm512_castps_si512(even), _mm512_castps_si512(odd));
    else store_high_halves<Stream>(d, round_high(even), round_high(odd));
  } else {
    store_high_halves<Stream>(d, round_high_nan(even), round_high_nan(odd));
  }
}
#endif

/// Whether Fn's result is always one of its operands' values, or one negated: on bf16 values
/// (and bf16-exact scalars) it needs no rounding but a NaN's quietening.
template <class Fn>
inline constexpr bool selects_operand = requires { requires Fn::selects_operand; };

/// d[i] = round(fn(widen(s[k][i]) or u[k]...)) for i < n: operand k is the one value u[k]
/// where bit k of Uniform is set, else a run of bf16 values. `Stream`: d is aligned to 64 bytes
/// and the packets of its whole lines go past the caches.
template <class Fn, unsigned Uniform, bool Stream, std::size_t... K>
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
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    if constexpr (lanes == 16) {
      // Two packets of halves at a time: the widening, rounding and narrowing cost a few
      // integer instructions per packet, where vcvtneps2bf16 and a widening shuffle per
      // operand bound the loop (benchmarks/README.md, W1 in bf16).
      auto halves = [&]<bool Exact>(std::bool_constant<Exact>) {
        for (; i + 2 * lanes <= n; i += 2 * lanes) {
          __m512i x[sizeof...(K)];
          auto fetch = [&]<std::size_t k>(std::integral_constant<std::size_t, k>) {
            if constexpr (!((Uniform >> k) & 1u)) x[k] = _mm512_loadu_si512(s[k] + i);
          };
          (fetch(std::integral_constant<std::size_t, K>{}), ...);
          auto half = [&]<std::size_t k>(std::integral_constant<std::size_t, k>, bool odd) {
            if constexpr ((Uniform >> k) & 1u) return splat[k];
            else return odd ? odd_half(x[k]) : even_half(x[k]);
          };
          const P even = fn.packet(half(std::integral_constant<std::size_t, K>{}, false)...);
          const P odd = fn.packet(half(std::integral_constant<std::size_t, K>{}, true)...);
          store_halves<Exact, Stream>(d + i, even, odd);
        }
      };
      // A scalar operand that is no bf16 value may be the result: rounded then.
      bool exact_scalars = true;
      for (std::size_t k = 0; k < sizeof...(K); ++k)
        if ((Uniform >> k) & 1u) exact_scalars = exact_scalars && (std::bit_cast<std::uint32_t>(u[k]) & 0xffffu) == 0;
      if (selects_operand<Fn> && exact_scalars) halves(std::true_type{});
      else halves(std::false_type{});
    }
#endif
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
  if (!stream) return bf16_detail::run<Fn, Uniform, false>(fn, s, u, d, n, std::make_index_sequence<N>{});
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (bf16_detail::lanes == 16) {
    // Straight past the caches from the first whole line: no copy through a buffer.
    const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(d) % 64);
    const std::int64_t head = misaligned % 2 != 0 ? n : std::min(n, (64 - misaligned) % 64 / 2);
    bf16_detail::run<Fn, Uniform, false>(fn, s, u, d, head, std::make_index_sequence<N>{});
    const std::uint16_t* at[N];
    for (std::size_t k = 0; k < N; ++k) at[k] = ((Uniform >> k) & 1u) ? s[k] : s[k] + head;
    return bf16_detail::run<Fn, Uniform, true>(fn, at, u, d + head, n - head, std::make_index_sequence<N>{});
  }
#endif
  constexpr std::int64_t chunk = 1024;
  alignas(64) std::uint16_t buf[chunk];
  for (std::int64_t b = 0; b < n; b += chunk) {
    const std::int64_t m = std::min(chunk, n - b);
    const std::uint16_t* at[N];
    for (std::size_t k = 0; k < N; ++k) at[k] = ((Uniform >> k) & 1u) ? s[k] : s[k] + b;
    bf16_detail::run<Fn, Uniform, false>(fn, at, u, buf, m, std::make_index_sequence<N>{});
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
