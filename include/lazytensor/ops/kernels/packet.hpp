#pragma once
// SIMD packets from Eigen's packet math, for functors whose packet form gives bitwise the
// same result as their scalar form (IEEE-exact operations, selects and comparisons). Fused
// kernels use a functor's `packet` member where it has one and its scalar form otherwise.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>
#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>  // a build for plain x86-64: the AVX-512 intrinsics would be parsed for nothing
#endif

namespace lt::kernels {

template <class T> using packet_t = typename Eigen::internal::packet_traits<T>::type;
template <class P> using packet_scalar_t = typename Eigen::internal::unpacket_traits<P>::type;
/// Lanes in the packet of T (1 where T has no SIMD packet). Named from T rather than the
/// packet type: a packet type as a template argument loses its attributes, and GCC warns.
template <class T> inline constexpr int packet_lanes = Eigen::internal::packet_traits<T>::size;

namespace pk {
using Eigen::internal::padd;
using Eigen::internal::pand;
using Eigen::internal::pcmp_eq;
using Eigen::internal::pcmp_le;
using Eigen::internal::pcmp_lt;
using Eigen::internal::pdiv;
using Eigen::internal::pmul;
using Eigen::internal::pnegate;
using Eigen::internal::pselect;
using Eigen::internal::psub;

template <class P> P splat(double v) { return Eigen::internal::pset1<P>(static_cast<packet_scalar_t<P>>(v)); }

/// A comparison mask as the values 1 and 0, as a bool result converted to the compute type.
template <class P> P mask_to_value(const P& mask) { return pand(mask, splat<P>(1)); }

/// torch.maximum (Max) or torch.minimum of packets, as the scalar form bit for bit: a where a
/// is NaN, else b where b is NaN, else a < b ? b : a (for the minimum, b < a ? b : a).
template <bool Max, class P> P pminmax_nan(const P& a, const P& b) {
#if defined(__SSE2__)
  // Eigen's pmax(a, b) on x86 is the max instruction with its operands swapped: a < b ? b : a,
  // and a where either is NaN. Likewise pmin.
  const P chosen = Max ? Eigen::internal::pmax(a, b) : Eigen::internal::pmin(a, b);
#else
  const P chosen = Max ? pselect(pcmp_lt(a, b), b, a) : pselect(pcmp_lt(b, a), b, a);
#endif
#if defined(__AVX512F__)
  // Mask registers: Eigen's compares and selects would go through vectors of all-ones lanes.
  if constexpr (sizeof(P) == 64 && std::is_same_v<packet_scalar_t<P>, float>)
    return _mm512_mask_mov_ps(chosen, _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), b, b, _CMP_UNORD_Q), b);
  if constexpr (sizeof(P) == 64 && std::is_same_v<packet_scalar_t<P>, double>)
    return _mm512_mask_mov_pd(chosen, _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(a, a, _CMP_ORD_Q), b, b, _CMP_UNORD_Q), b);
#endif
  return pselect(pcmp_eq(a, a), pselect(pcmp_eq(b, b), chosen, b), a);
}
/// Whether every float lane of x has |x| <= bound (false for a NaN lane).
template <class P>
[[gnu::always_inline]] inline bool all_within(const P& x, float bound) {
  using namespace Eigen::internal;
#if defined(__AVX512F__)
  // One compare into a mask register: a packet's predux_any costs more than the compare. The
  // lanes outside (or NaN) are asked for, so that the test is for an empty mask (kortest).
  if constexpr (sizeof(P) == 64 && std::is_same_v<packet_scalar_t<P>, float>)
    return _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(bound), _CMP_NLE_UQ) == 0;
#endif
  return !predux_any(pandnot(ptrue(x), pcmp_le(pabs(x), pset1<P>(bound))));
}

/// Whether every lane of x has lo <= |x| <= hi (false for a NaN lane).
template <class P>
[[gnu::always_inline]] inline bool all_magnitudes_within(const P& x, packet_scalar_t<P> lo, packet_scalar_t<P> hi) {
  using namespace Eigen::internal;
#if defined(__AVX512F__)
  // Compares into mask registers: a packet's predux_any costs more than the compares.
  if constexpr (sizeof(P) == 64 && std::is_same_v<packet_scalar_t<P>, float>) {
    const __m512 m = _mm512_abs_ps(x);
    return _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(m, _mm512_set1_ps(lo), _CMP_GE_OQ), m, _mm512_set1_ps(hi), _CMP_LE_OQ) == 0xFFFF;
  }
  if constexpr (sizeof(P) == 64 && std::is_same_v<packet_scalar_t<P>, double>) {
    const __m512d m = _mm512_abs_pd(x);
    return _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(m, _mm512_set1_pd(lo), _CMP_GE_OQ), m, _mm512_set1_pd(hi), _CMP_LE_OQ) == 0xFF;
  }
#endif
  const P m = pabs(x);
  return !predux_any(pandnot(ptrue(x), pand(pcmp_le(pset1<P>(lo), m), pcmp_le(m, pset1<P>(hi)))));
}

/// Division of many values by one divisor b with the bits of a / b, at the cost of a product:
/// q = a * (1/b) is within an ulp of a / b, and one fused correction, q + (a - q b) * (1/b) with
/// the remainder exact, rounds it to the correctly rounded quotient (Markstein's theorem, for a
/// correctly rounded reciprocal). The theorem holds where nothing under- or overflows: with the
/// divisor within 2^+-20 (2^+-100 for double), a quotient q within 2^+-80 (2^+-800) puts the
/// dividend within 2^+-100 (2^+-900), far inside the normal range, so one check of q per
/// packet suffices. Other packets (zeros, subnormals, huge values, inf, NaN) and other divisors
/// divide as they are, as does every lane without hardware FMA.
template <class T> struct DivideBy {
  static_assert(std::is_floating_point_v<T>);
  static constexpr bool is_float = std::is_same_v<T, float>;
  static constexpr T divisor_lo = is_float ? T(0x1p-20) : T(0x1p-100), divisor_hi = is_float ? T(0x1p20) : T(0x1p100);
  static constexpr T quotient_lo = is_float ? T(0x1p-80) : T(0x1p-800), quotient_hi = is_float ? T(0x1p80) : T(0x1p800);
#if defined(EIGEN_VECTORIZE_FMA)
  static constexpr bool fused = true;
#else
  static constexpr bool fused = false;
#endif
  T b, r;
  bool refine;

  explicit DivideBy(T divisor)
      : b(divisor), r(T(1) / divisor), refine(fused && std::abs(divisor) >= divisor_lo && std::abs(divisor) <= divisor_hi) {}

  T operator()(T a) const {
    if (!refine) return a / b;
    const T q = a * r;
    if (!(std::abs(q) >= quotient_lo && std::abs(q) <= quotient_hi)) return a / b;
    return std::fma(std::fma(-q, b, a), r, q);
  }
  template <class P> [[gnu::always_inline]] P packet(const P& a) const {
    using namespace Eigen::internal;
    const P vb = pset1<P>(b);
    if (!refine) return pdiv(a, vb);
    const P vr = pset1<P>(r), q = pmul(a, vr);
    if (!all_magnitudes_within(q, quotient_lo, quotient_hi)) [[unlikely]] return pdiv(a, vb);
    return pmadd(pmadd(pnegate(q), vb, a), vr, q);
  }
};

/// y with libm's exp in the lanes where x is outside [-bound, bound] or NaN. Out of line and
/// cold: a call inside the hot loop would make the compiler reload its constants every packet.
/// The packets come by value, in registers; a reference would need them in memory.
template <class P>
[[gnu::noinline, gnu::cold]] P exp_float_outside(P x, P y, float bound) {
  using namespace Eigen::internal;
  constexpr int n = unpacket_traits<P>::size;
  alignas(64) float xs[n], ys[n];
  pstoreu(xs, x);
  pstoreu(ys, y);
  for (int i = 0; i < n; ++i)
    if (!(std::fabs(xs[i]) <= bound)) ys[i] = std::exp(xs[i]);
  return ploadu<P>(ys);
}

/// a * b + c with the product rounded first, as on a CPU without FMA: the transcendental
/// polynomials below give the same bits at every capability level, and in a fragment compiled
/// in a user's file with its own flags, as in the kernels.
template <class P>
[[gnu::always_inline]] inline P mul_add(const P& a, const P& b, const P& c) {
  return Eigen::internal::padd(Eigen::internal::pmul(a, b), c);
}

/// exp of float lanes: Eigen's polynomial (pexp_float's Cephes form, with its two-part range
/// reduction and every multiply-add rounded twice), which is accurate where the result is a
/// normal float; lanes beyond +-87 (near or past subnormal and infinite results) and NaN take
/// libm's value, since the polynomial clamps its argument there.
template <class P>
[[gnu::always_inline]] inline P exp_float(const P& x) {
  using namespace Eigen::internal;
  constexpr float bound = 87.0f;
  const P clamped = pmax(pmin(x, pset1<P>(88.723f)), pset1<P>(-88.723f));
  const P m = pfloor(mul_add(clamped, pset1<P>(1.44269504088896341f), pset1<P>(0.5f)));
  P r = mul_add(m, pset1<P>(-0.693359375f), clamped);
  r = mul_add(m, pset1<P>(2.12194440e-4f), r);
  const P r2 = pmul(r, r), r3 = pmul(r2, r);
  P y = mul_add(pset1<P>(1.9875691500E-4f), r, pset1<P>(1.3981999507E-3f));
  P y1 = mul_add(pset1<P>(4.1665795894E-2f), r, pset1<P>(1.6666665459E-1f));
  const P y2 = padd(r, pset1<P>(1.0f));
  y = mul_add(y, r, pset1<P>(8.3334519073E-3f));
  y1 = mul_add(y1, r, pset1<P>(5.0000001201E-1f));
  y = mul_add(y, r3, y1);
  y = mul_add(y, r2, y2);
  y = pmax(pldexp(y, m), x);
  if (!all_within(x, bound)) [[unlikely]] y = exp_float_outside(x, y, bound);
  return y;
}

/// erf of float lanes: Eigen's 13/8-degree rational interpolant (generic_fast_erf_float), within
/// a couple of ulp on [-4, 4], outside which erf rounds to +-1 in f32; NaN lanes stay NaN. Its
/// polynomials vectorise where libm's erff is a call per value (GELU's epilogue ran at a
/// third of its product's speed on it). Multiply-adds rounded twice, as in exp_float.
template <class P>
[[gnu::always_inline]] inline P erf_float(const P& a) {
  using namespace Eigen::internal;
  const P x = pmax(pmin(a, pset1<P>(4.f)), pset1<P>(-4.f));
  const P x2 = pmul(x, x);
  P p = mul_add(x2, pset1<P>(-2.72614225801306e-10f), pset1<P>(2.77068142495902e-08f));
  p = mul_add(x2, p, pset1<P>(-2.10102402082508e-06f));
  p = mul_add(x2, p, pset1<P>(-5.69250639462346e-05f));
  p = mul_add(x2, p, pset1<P>(-7.34990630326855e-04f));
  p = mul_add(x2, p, pset1<P>(-2.95459980854025e-03f));
  p = mul_add(x2, p, pset1<P>(-1.60960333262415e-02f));
  p = pmul(x, p);
  P q = mul_add(x2, pset1<P>(-1.45660718464996e-05f), pset1<P>(-2.13374055278905e-04f));
  q = mul_add(x2, q, pset1<P>(-1.68282697438203e-03f));
  q = mul_add(x2, q, pset1<P>(-7.37332916720468e-03f));
  q = mul_add(x2, q, pset1<P>(-1.42647390514189e-02f));
  return pselect(pcmp_eq(a, a), pdiv(p, q), a);
}

/// Stores packet p at dst, aligned to the packet's size, past the caches: for outputs too large
/// to be read again from cache, whose lines then need not be read before they are written.
/// Where no such store exists for P, an ordinary aligned store. Call stream_fence() after.
template <class T, class P>
[[gnu::always_inline]] inline void stream_store(T* dst, const P& p) {
#if defined(__AVX512F__)
  if constexpr (sizeof(P) == 64 && std::is_same_v<T, float>) return _mm512_stream_ps(dst, p);
  if constexpr (sizeof(P) == 64 && std::is_same_v<T, double>) return _mm512_stream_pd(dst, p);
#endif
#if defined(__AVX__)
  if constexpr (sizeof(P) == 32 && std::is_same_v<T, float>) return _mm256_stream_ps(dst, p);
  if constexpr (sizeof(P) == 32 && std::is_same_v<T, double>) return _mm256_stream_pd(dst, p);
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(P) == 16 && std::is_same_v<T, float>) return _mm_stream_ps(dst, p);
  if constexpr (sizeof(P) == 16 && std::is_same_v<T, double>) return _mm_stream_pd(dst, p);
#endif
  Eigen::internal::pstore(dst, p);
}

/// Copies `bytes` from src to dst, storing past the caches where dst is aligned for it.
/// Call stream_fence() after.
inline void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
#if defined(__AVX512F__)
  constexpr std::size_t width = 64;
#elif defined(__AVX__)
  constexpr std::size_t width = 32;
#else
  constexpr std::size_t width = 16;
#endif
  const std::size_t head = std::min(bytes, (width - reinterpret_cast<std::uintptr_t>(dst) % width) % width);
  std::memcpy(dst, src, head);
  std::size_t i = head;
#if defined(__SSE2__)
  for (; i + width <= bytes; i += width) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
#elif defined(__AVX__)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
#else
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
#endif
  }
#endif
  std::memcpy(dst + i, src + i, bytes - i);
}

/// Orders streamed stores before what follows (another thread reading the values).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/// Lane 0 of `f` applied to a packet of x: a scalar form that equals every lane of the packet
/// form bit for bit.
template <class T, class F>
T through_packet(T x, F&& f) {
  return Eigen::internal::pfirst(f(Eigen::internal::pset1<packet_t<T>>(x)));
}
}  // namespace pk

}  // namespace lt::kernels
