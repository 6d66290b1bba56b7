#pragma once
// Windows over the last two dims of [N, C, H, W]: max_pool2d, avg_pool2d, adaptive_avg_pool2d.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/pool_grad.hpp"

namespace lt::pool {

/// Pool2dAttrs in the names of the kernels.
struct Window {
  std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode, count_include_pad;
  explicit Window(const Attrs& attrs) : Window(decode<Pool2dAttrs>(attrs)) {}
  explicit Window(const Pool2dAttrs& a)
      : kh(a.kernel_h), kw(a.kernel_w), sh(a.stride_h), sw(a.stride_w), ph(a.pad_h), pw(a.pad_w), dh(a.dilation_h),
        dw(a.dilation_w), ceil_mode(a.ceil_mode), count_include_pad(a.count_include_pad) {}
  /// PyTorch's pooling output size; with ceil_mode the last window must start inside the input.
  static std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil) {
    return checked_window_extent(in, k, s, p, d, ceil, "pooling window");
  }
};

inline void check_input(const Meta& x) {
  LT_CHECK(x.shape.rank() == 4, "expected input [N, C, H, W], got ", x.shape);
  LT_CHECK(is_floating(x.dtype), "expected a floating input, got ", name(x.dtype));
}

inline Meta window_infer(std::span<const Meta> in, const Attrs& a) {
  check_input(in[0]);
  Window w(a);
  LT_CHECK(w.kh > 0 && w.kw > 0 && w.sh > 0 && w.sw > 0 && w.dh > 0 && w.dw > 0, "kernel, stride and dilation must be positive");
  LT_CHECK(w.ph >= 0 && w.pw >= 0 && 2 * w.ph <= w.kh && 2 * w.pw <= w.kw, "padding must be at most half the kernel");
  const Shape& s = in[0].shape;
  std::int64_t oh = Window::out_size(s[2], w.kh, w.sh, w.ph, w.dh, w.ceil_mode);
  std::int64_t ow = Window::out_size(s[3], w.kw, w.sw, w.pw, w.dw, w.ceil_mode);
  LT_CHECK(oh > 0 && ow > 0, "the window ", w.kh, "x", w.kw, " (dilation ", w.dh, "x", w.dw, ", padding ", w.ph, "x", w.pw,
           ") is larger than the padded input ", s);
  return {Shape{s[0], s[1], oh, ow}, in[0].dtype};
}

/// v itself where it is contiguous (not owned), else a contiguous copy of it.
inline Array contiguous_values(const View& v) {
  if (v.contiguous()) return Array{Buffer(), v};
  Array copy = Array::empty(v.dtype, v.shape);
  kernels::copy_strided(v, copy.view);
  return copy;
}

/// Runs f(plane input, plane output) over every (n, c) plane in parallel, on the input itself
/// when it is contiguous and on a contiguous copy otherwise.
template <class T, class F>
void for_each_plane(const View& x, const View& out, F&& f) {
  const Array contiguous = contiguous_values(x);
  const View& xc = contiguous.view;
  std::int64_t planes = x.shape[0] * x.shape[1], in_plane = x.shape[2] * x.shape[3], out_plane = out.shape[2] * out.shape[3];
  kernels::parallel_for_each_block(planes, in_plane, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = b; k < e; ++k) f(xc.ptr<T>() + k * in_plane, out.ptr<T>() + k * out_plane);
  });
}

/// Calls reduce(plane, i0, j0) for each output pixel: i0, j0 are its window's top-left corner
/// in input coordinates, which may lie in the padding.
template <class Reduce>
void for_each_window(const View& x, const View& out, const Window& w, Reduce&& reduce) {
  std::int64_t OH = out.shape[2], OW = out.shape[3];
  kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
    for_each_plane<T>(x, out, [&](const T* plane, T* y) {
      for (std::int64_t oi = 0; oi < OH; ++oi)
        for (std::int64_t oj = 0; oj < OW; ++oj) y[oi * OW + oj] = reduce(plane, oi * w.sh - w.ph, oj * w.sw - w.pw);
    });
  });
}

/// The offset in its plane of the element a max window chooses: the first largest, or the
/// first NaN (NaN wins, as in PyTorch). Selects rather than branches: on real data the
/// comparisons go either way and a branch would be mispredicted half the time.
template <class T>
[[gnu::always_inline]] inline std::int64_t window_argmax(const T* x, std::int64_t H, std::int64_t W, const Window& w,
                                                         std::int64_t i0, std::int64_t j0) {
  std::int64_t at = -1;
  T best = -std::numeric_limits<T>::infinity();
  bool nan = false;
  if (i0 >= 0 && j0 >= 0 && i0 + (w.kh - 1) * w.dh < H && j0 + (w.kw - 1) * w.dw < W) {
    // Inside the plane: no bounds to test, and the first tap starts the search. One compare
    // per tap, NaN noted on the side; a window holding a NaN is searched again below.
    at = i0 * W + j0;
    best = x[at];
    unsigned any_nan = best != best;
    for (std::int64_t ki = 0; ki < w.kh; ++ki)
      for (std::int64_t kj = ki == 0 ? 1 : 0; kj < w.kw; ++kj) {
        const std::int64_t o = (i0 + ki * w.dh) * W + j0 + kj * w.dw;
        const T v = x[o];
        const bool take = v > best;
        at = take ? o : at;
        best = take ? v : best;
        any_nan |= static_cast<unsigned>(v != v);
      }
    if (any_nan == 0) return at;
    at = -1;
    best = -std::numeric_limits<T>::infinity();
  }
  for (std::int64_t ki = 0; ki < w.kh; ++ki) {
    std::int64_t i = i0 + ki * w.dh;
    if (i < 0 || i >= H) continue;
    for (std::int64_t kj = 0; kj < w.kw; ++kj) {
      std::int64_t j = j0 + kj * w.dw;
      if (j < 0 || j >= W) continue;
      const T v = x[i * W + j];
      const bool take = !nan && (v > best || v != v || at < 0);
      at = take ? i * W + j : at;
      best = take ? v : best;
      nan = nan || v != v;
    }
  }
  return at;
}

/// Whether this build has the instructions of the 16-window loops below.
#if defined(__AVX512F__)
inline constexpr bool window_packets = true;
#else
inline constexpr bool window_packets = false;
#endif

/// The most common window, 2x2 with stride 2 and neither padding nor dilation: its whole
/// windows are taken 16 at a time (where the instructions exist) or a row of outputs at a time.
inline bool plain_2x2(const Window& w) {
  return w.kh == 2 && w.kw == 2 && w.sh == 2 && w.sw == 2 && w.ph == 0 && w.pw == 0 && w.dh == 1 && w.dw == 1;
}

#if defined(__AVX512F__)
/// The four taps of 16 whole 2x2 windows (top left, top right, bottom left, bottom right: the
/// order window_argmax searches), one window per lane.
struct Taps {
  __m512 p, q, u, v;
};

/// The maxima of the windows with plain_2x2's loop's bits: NaN where a window holds one, else
/// the pairwise maxima max(max(p, q), max(u, v)) keeping the earlier of equals.
[[gnu::always_inline]] inline __m512 window_maxima(const Taps& t) {
  // std::max(a, b) is a < b ? b : a, which max_ps(b, a) computes (b > a ? b : a).
  const __m512 m = _mm512_max_ps(_mm512_max_ps(t.v, t.u), _mm512_max_ps(t.q, t.p));
  const __mmask16 any_nan = _mm512_cmp_ps_mask(t.p, t.q, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(t.u, t.v, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(any_nan, m, _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}

/// The windows' gradients (lanes of g) placed at the tap each window chooses, as
/// window_argmax: the first NaN, else the first largest; +0 at the other taps.
[[gnu::always_inline]] inline Taps window_gradients(const Taps& t, __m512 g) {
  const __mmask16 take_q = _mm512_cmp_ps_mask(t.q, t.p, _CMP_GT_OQ);
  __m512 best = _mm512_mask_blend_ps(take_q, t.p, t.q);
  const __mmask16 take_u = _mm512_cmp_ps_mask(t.u, best, _CMP_GT_OQ);
  best = _mm512_mask_blend_ps(take_u, best, t.u);
  const __mmask16 take_v = _mm512_cmp_ps_mask(t.v, best, _CMP_GT_OQ);
  __mmask16 at_v = take_v, at_u = take_u & ~take_v, at_q = take_q & ~take_u & ~take_v;
  __mmask16 at_p = ~(at_q | at_u | at_v);
  const __mmask16 nan_p = _mm512_cmp_ps_mask(t.p, t.p, _CMP_UNORD_Q), nan_q = _mm512_cmp_ps_mask(t.q, t.q, _CMP_UNORD_Q);
  const __mmask16 nan_u = _mm512_cmp_ps_mask(t.u, t.u, _CMP_UNORD_Q), nan_v = _mm512_cmp_ps_mask(t.v, t.v, _CMP_UNORD_Q);
  if (const __mmask16 any = nan_p | nan_q | nan_u | nan_v; any != 0) {  // the first NaN wins
    at_p = (at_p & ~any) | nan_p;
    at_q = (at_q & ~any) | (nan_q & ~nan_p);
    at_u = (at_u & ~any) | (nan_u & ~nan_p & ~nan_q);
    at_v = (at_v & ~any) | (nan_v & ~nan_p & ~nan_q & ~nan_u);
  }
  const __m512 grad = _mm512_add_ps(_mm512_setzero_ps(), g);  // as the gradient added to a zeroed element
  return {_mm512_maskz_mov_ps(at_p, grad), _mm512_maskz_mov_ps(at_q, grad), _mm512_maskz_mov_ps(at_u, grad),
          _mm512_maskz_mov_ps(at_v, grad)};
}

/// The first n lanes of 16 (none for n <= 0, all for n >= 16).
inline __mmask16 lanes_up_to(std::int64_t n) {
  return n <= 0 ? __mmask16(0) : n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

/// Windows that tile planes of width W = 2, 4, 8 or 16 (1 to 8 windows a row, a whole row
/// pair each) lie in the input in window order, 4 values each: 16 windows are 64 consecutive
/// values, the first 8 windows' in the first 32. Permutes take the taps out of those 4 vectors
/// and put the windows' gradients back.
class TiledWindows {
 public:
  static bool fits(std::int64_t W) { return W == 2 || W == 4 || W == 8 || W == 16; }

  explicit TiledWindows(std::int64_t W) {
    alignas(64) std::int32_t tap[4][16], back[4][16];
    const std::int64_t OW = W / 2;
    for (std::int64_t w = 0; w < 16; ++w) {
      const std::int64_t at = w / OW * 2 * W + 2 * (w % OW);  // its top left value in the 64
      const std::int64_t offsets[4] = {at, at + 1, at + W, at + W + 1};
      for (int t = 0; t < 4; ++t) tap[t][w] = static_cast<std::int32_t>(offsets[t] % 32);
    }
    for (std::int64_t f = 0; f < 64; ++f) {
      const std::int64_t pair = f / (2 * W), in_pair = f % (2 * W), col = in_pair % W;
      const std::int64_t w = pair * OW + col / 2, t = 2 * (in_pair / W) + col % 2;
      back[f / 16][f % 16] = static_cast<std::int32_t>(w + 16 * (t % 2));
      if (t >= 2) bottom_[f / 16] = static_cast<__mmask16>(bottom_[f / 16] | (1u << (f % 16)));
    }
    for (int k = 0; k < 4; ++k) {
      tap_[k] = _mm512_load_si512(tap[k]);
      back_[k] = _mm512_load_si512(back[k]);
    }
  }

  /// The taps of `windows` (1 to 16) windows whose values start at x, and the lanes of the
  /// 4 vectors of values they cover.
  [[gnu::always_inline]] Taps taps(const float* x, std::int64_t windows, __mmask16 (&lanes)[4]) const {
    __m512 z[4];
    for (int k = 0; k < 4; ++k) {
      lanes[k] = lanes_up_to(4 * windows - 16 * k);
      z[k] = _mm512_maskz_loadu_ps(lanes[k], x + 16 * k);
    }
    __m512 t[4];
    for (int k = 0; k < 4; ++k)
      t[k] = _mm512_mask_blend_ps(0xFF00, _mm512_permutex2var_ps(z[0], tap_[k], z[1]), _mm512_permutex2var_ps(z[2], tap_[k], z[3]));
    return {t[0], t[1], t[2], t[3]};
  }

  /// Writes the windows' per-tap values d back where the taps lie, in the lanes `lanes`.
  [[gnu::always_inline]] void put(const Taps& d, float* dx, const __mmask16 (&lanes)[4]) const {
    for (int k = 0; k < 4; ++k) {
      const __m512 top = _mm512_permutex2var_ps(d.p, back_[k], d.q), bottom = _mm512_permutex2var_ps(d.u, back_[k], d.v);
      _mm512_mask_storeu_ps(dx + 16 * k, lanes[k], _mm512_mask_blend_ps(bottom_[k], top, bottom));
    }
  }

 private:
  __m512i tap_[4], back_[4];   // per tap: each window's value in its half; per vector: window + 16 (right column)
  __mmask16 bottom_[4] = {};  // per vector: the lanes of bottom taps
};

/// The four taps of 16 whole 2x2 windows from j on (input rows r0 and r1), with the masks of
/// their lanes: the last packet of a row is cut short by masks, as rows of whole windows are
/// often short.
struct WindowTaps : Taps {
  __mmask16 first_lanes, second_lanes;  // of the input rows' two vectors
  __mmask16 window_lanes;               // of the windows
  [[gnu::always_inline]] WindowTaps(const float* r0, const float* r1, std::int64_t j, std::int64_t windows) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const auto lanes = static_cast<unsigned>(2 * std::min<std::int64_t>(16, windows - j));
    first_lanes = static_cast<__mmask16>(lanes >= 16 ? 0xFFFFu : (1u << lanes) - 1);
    second_lanes = static_cast<__mmask16>(lanes <= 16 ? 0u : lanes == 32 ? 0xFFFFu : (1u << (lanes - 16)) - 1);
    window_lanes = static_cast<__mmask16>(lanes == 32 ? 0xFFFFu : (1u << (lanes / 2)) - 1);
    const __m512 a0 = _mm512_maskz_loadu_ps(first_lanes, r0 + 2 * j);
    const __m512 a1 = _mm512_maskz_loadu_ps(second_lanes, r0 + 2 * j + 16);
    const __m512 b0 = _mm512_maskz_loadu_ps(first_lanes, r1 + 2 * j);
    const __m512 b1 = _mm512_maskz_loadu_ps(second_lanes, r1 + 2 * j + 16);
    p = _mm512_permutex2var_ps(a0, even, a1), q = _mm512_permutex2var_ps(a0, odd, a1);
    u = _mm512_permutex2var_ps(b0, even, b1), v = _mm512_permutex2var_ps(b0, odd, b1);
  }
};
#endif

/// The gradient of a row of whole 2x2 windows (input rows r0 and r1; g, the outputs'
/// gradients), 16 windows at a time: each window's gradient goes to the element window_argmax
/// chooses (the first NaN, else the first largest), +0 to its other three. Returns how many
/// windows it wrote (all where the instructions exist, else none: the search does them).
inline std::int64_t plain_2x2_backward_packets([[maybe_unused]] const float* r0, [[maybe_unused]] const float* r1,
                                               [[maybe_unused]] const float* g, [[maybe_unused]] std::int64_t windows,
                                               [[maybe_unused]] float* d0, [[maybe_unused]] float* d1) {
  std::int64_t j = 0;
#if defined(__AVX512F__)
  const __m512i first_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second_half = _mm512_add_epi32(first_half, _mm512_set1_epi32(8));
  for (; j < windows; j += 16) {
    const WindowTaps taps(r0, r1, j, windows);
    const __mmask16 first_lanes = taps.first_lanes, second_lanes = taps.second_lanes;
    const Taps d = window_gradients(taps, _mm512_maskz_loadu_ps(taps.window_lanes, g + j));
    _mm512_mask_storeu_ps(d0 + 2 * j, first_lanes, _mm512_permutex2var_ps(d.p, first_half, d.q));
    _mm512_mask_storeu_ps(d0 + 2 * j + 16, second_lanes, _mm512_permutex2var_ps(d.p, second_half, d.q));
    _mm512_mask_storeu_ps(d1 + 2 * j, first_lanes, _mm512_permutex2var_ps(d.u, first_half, d.v));
    _mm512_mask_storeu_ps(d1 + 2 * j + 16, second_lanes, _mm512_permutex2var_ps(d.u, second_half, d.v));
  }
  j = std::min(j, windows);
#endif
  return j;
}

/// The maxima of a row of whole 2x2 windows (input rows r0 and r1), 16 windows at a time,
/// with plain_2x2's loop's bits: NaN where a window holds one, else the pairwise maxima
/// max(max(p, q), max(u, v)) keeping the earlier of equals. Returns how many windows it
/// wrote (all where the instructions exist, else none).
inline std::int64_t plain_2x2_forward_packets([[maybe_unused]] const float* r0, [[maybe_unused]] const float* r1,
                                              [[maybe_unused]] std::int64_t windows, [[maybe_unused]] float* y) {
  std::int64_t j = 0;
#if defined(__AVX512F__)
  for (; j < windows; j += 16) {
    const WindowTaps taps(r0, r1, j, windows);
    _mm512_mask_storeu_ps(y + j, taps.window_lanes, window_maxima(taps));
  }
  j = std::min(j, windows);
#endif
  return j;
}

/// Whether every window of the tensor is one of TiledWindows' (f32, where the instructions
/// exist): then its windows are taken 16 at a time straight through the planes.
inline bool tiled_planes(const Window& w, DType t, std::int64_t H, std::int64_t W, std::int64_t OH, std::int64_t OW) {
#if defined(__AVX512F__)
  return t == DType::f32 && plain_2x2(w) && H == 2 * OH && W == 2 * OW && TiledWindows::fits(W);
#else
  (void)w, (void)t, (void)H, (void)W, (void)OH, (void)OW;
  return false;
#endif
}

/// Runs f(k, windows) for each packet k of 16 windows (the last may have fewer), in parallel.
template <class F>
void for_each_window_packet(std::int64_t windows, F&& f) {
  kernels::parallel_for_each_block((windows + 15) / 16, 64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = b; k < e; ++k) f(k, std::min<std::int64_t>(16, windows - 16 * k));
  });
}

/// max_pool2d of tiled planes of width W (see tiled_planes): `windows` maxima of x into y.
inline void tiled_maxima([[maybe_unused]] const float* x, [[maybe_unused]] float* y, [[maybe_unused]] std::int64_t windows,
                         [[maybe_unused]] std::int64_t W) {
#if defined(__AVX512F__)
  const TiledWindows tiled(W);
  for_each_window_packet(windows, [&](std::int64_t k, std::int64_t n) {
    __mmask16 lanes[4];
    _mm512_mask_storeu_ps(y + 16 * k, lanes_up_to(n), window_maxima(tiled.taps(x + 64 * k, n, lanes)));
  });
#endif
}

/// max_pool2d's gradient over tiled planes of width W: every element of dx is written.
inline void tiled_gradients([[maybe_unused]] const float* x, [[maybe_unused]] const float* g, [[maybe_unused]] float* dx,
                            [[maybe_unused]] std::int64_t windows, [[maybe_unused]] std::int64_t W) {
#if defined(__AVX512F__)
  const TiledWindows tiled(W);
  for_each_window_packet(windows, [&](std::int64_t k, std::int64_t n) {
    __mmask16 lanes[4];
    const Taps t = tiled.taps(x + 64 * k, n, lanes);
    tiled.put(window_gradients(t, _mm512_maskz_loadu_ps(lanes_up_to(n), g + 16 * k)), dx + 64 * k, lanes);
  });
#endif
}

inline void max_pool2d_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  Window w(a);
  std::int64_t H = in[0].shape[2], W = in[0].shape[3];
  if (tiled_planes(w, out.dtype, H, W, out.shape[2], out.shape[3])) {
    const Array x = contiguous_values(in[0]);
    tiled_maxima(x.view.ptr<float>(), out.ptr<float>(), out.numel(), W);
    return;
  }
  if (plain_2x2(w)) {
    const std::int64_t OH = out.shape[2], OW = out.shape[3], whole_rows = std::min(OH, H / 2), whole = std::min(OW, W / 2);
    kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
      for_each_plane<T>(in[0], out, [&](const T* x, T* y) {
        for (std::int64_t oi = 0; oi < OH; ++oi) {
          const T *r0 = x + 2 * oi * W, *r1 = r0 + W;
          T* yr = y + oi * OW;
          std::int64_t oj = 0;
          if constexpr (std::is_same_v<T, float>)
            if (oi < whole_rows) oj = plain_2x2_forward_packets(r0, r1, whole, yr);
          if (oi < whole_rows)
            for (; oj < whole; ++oj) {
              const T p = r0[2 * oj], q = r0[2 * oj + 1], u = r1[2 * oj], v = r1[2 * oj + 1];
              // Pairwise maxima keep the earlier of equals; any NaN is the result.
              const T m = std::max(std::max(p, q), std::max(u, v));
              yr[oj] = (p != p || q != q || u != u || v != v) ? std::numeric_limits<T>::quiet_NaN() : m;
            }
          for (; oj < OW; ++oj) {  // a window cut by the plane's edge (ceil mode)
            std::int64_t at = window_argmax(x, H, W, w, oi * 2, oj * 2);
            yr[oj] = at < 0 ? -std::numeric_limits<T>::infinity() : x[at];
          }
        }
      });
    });
    return;
  }
  for_each_window(in[0], out, w, [&]<class T>(const T* x, std::int64_t i0, std::int64_t j0) {
    std::int64_t at = window_argmax(x, H, W, w, i0, j0);
    return at < 0 ? -std::numeric_limits<T>::infinity() : x[at];
  });
}

/// max_pool2d's gradient as one op: inputs {gradient of the output [N, C, OH, OW], x [N, C, H, W]},
/// attrs as max_pool2d's. Each output's gradient goes to the element its window chose, and
/// overlapping windows add in window order.
inline Meta max_pool2d_backward_infer(std::span<const Meta> in, const Attrs& a) {
  const Meta x = window_infer(in.subspan(1), a);
  LT_CHECK(in[0].shape == x.shape && in[0].dtype == x.dtype, "the gradient must be the output's ", x.shape, " ",
           name(x.dtype), ", got ", in[0].shape, " ", name(in[0].dtype));
  return in[1];
}

inline void max_pool2d_backward_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  Window w(a);
  const Array g = contiguous_values(in[0]), x = contiguous_values(in[1]);
  const std::int64_t H = out.shape[2], W = out.shape[3], OH = g.view.shape[2], OW = g.view.shape[3];
  const std::int64_t planes = out.shape[0] * out.shape[1];
  if (tiled_planes(w, out.dtype, H, W, OH, OW)) {
    tiled_gradients(x.view.ptr<float>(), g.view.ptr<float>(), out.ptr<float>(), g.view.numel(), W);
    return;
  }
  kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
    // Whole 2x2 windows are disjoint: rows of them are written 16 windows at a time.
    const bool packets = plain_2x2(w);
    const std::int64_t whole_rows = std::min(OH, H / 2), whole = std::min(OW, W / 2);
    // Where those windows tile the plane, they write every element: nothing to zero first.
    const bool covered = std::is_same_v<T, float> && window_packets && packets && 2 * OH == H && 2 * OW == W;
    kernels::parallel_for_each_block(planes, H * W, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t k = b; k < e; ++k) {
        const T *xp = x.view.ptr<T>() + k * H * W, *gp = g.view.ptr<T>() + k * OH * OW;
        T* dx = out.ptr<T>() + k * H * W;
        if (!covered) std::fill_n(dx, H * W, T(0));
        for (std::int64_t oi = 0; oi < OH; ++oi) {
          std::int64_t oj = 0;
          if constexpr (std::is_same_v<T, float>)
            if (packets && oi < whole_rows) {
              const std::int64_t top = 2 * oi * W;
              oj = plain_2x2_backward_packets(xp + top, xp + top + W, gp + oi * OW, whole, dx + top, dx + top + W);
            }
          for (; oj < OW; ++oj) {
            std::int64_t at = window_argmax(xp, H, W, w, oi * w.sh - w.ph, oj * w.sw - w.pw);
            if (at >= 0) dx[at] += gp[oi * OW + oj];
          }
        }
      }
    });
  });
}

inline void avg_pool2d_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  Window w(a);
  std::int64_t H = in[0].shape[2], W = in[0].shape[3];
  for_each_window(in[0], out, w, [&]<class T>(const T* x, std::int64_t i0, std::int64_t j0) {
    std::int64_t i1 = std::min(i0 + w.kh, H + w.ph), j1 = std::min(j0 + w.kw, W + w.pw);
    std::int64_t padded = (i1 - i0) * (j1 - j0);
    i0 = std::max<std::int64_t>(i0, 0), j0 = std::max<std::int64_t>(j0, 0);
    i1 = std::min(i1, H), j1 = std::min(j1, W);
    T acc = 0;
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = j0; j < j1; ++j) acc += x[i * W + j];
    return acc / static_cast<T>(w.count_include_pad ? padded : (i1 - i0) * (j1 - j0));
  });
}

// adaptive_avg_pool2d: AdaptivePool2dAttrs, the output's size.
inline Meta adaptive_infer(std::span<const Meta> in, const Attrs& attrs) {
  check_input(in[0]);
  const auto a = decode<AdaptivePool2dAttrs>(attrs);
  LT_CHECK(a.h > 0 && a.w > 0, "output size must be two positive extents");
  const Shape& s = in[0].shape;
  LT_CHECK(s[2] > 0 && s[3] > 0, "input spatial size must be non-empty, got ", s);
  return {Shape{s[0], s[1], a.h, a.w}, in[0].dtype};
}

inline void adaptive_kernel(std::span<const View> in, const View& out, const Attrs&) {
  std::int64_t H = in[0].shape[2], W = in[0].shape[3], OH = out.shape[2], OW = out.shape[3];
  kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
    for_each_plane<T>(in[0], out, [&](const T* x, T* y) {
      for (std::int64_t oi = 0; oi < OH; ++oi) {
        std::int64_t i0 = oi * H / OH, i1 = ((oi + 1) * H + OH - 1) / OH;
        for (std::int64_t oj = 0; oj < OW; ++oj) {
          std::int64_t j0 = oj * W / OW, j1 = ((oj + 1) * W + OW - 1) / OW;
          T acc = 0;
          for (std::int64_t i = i0; i < i1; ++i)
            for (std::int64_t j = j0; j < j1; ++j) acc += x[i * W + j];
          y[oi * OW + oj] = acc / static_cast<T>((i1 - i0) * (j1 - j0));
        }
      }
    });
  });
}

LT_DEFINE_OP(max_pool2d, OpDesc{.kind = OpKind::window,
                                .arity = 1,
                                .infer = &window_infer,
                                .kernel = &max_pool2d_kernel,
                                .grad = &grad::rule::max_pool2d});
LT_DEFINE_OP(avg_pool2d, OpDesc{.kind = OpKind::window,
                                .arity = 1,
                                .infer = &window_infer,
                                .kernel = &avg_pool2d_kernel,
                                .grad = &grad::rule::avg_pool2d});
LT_DEFINE_OP(adaptive_avg_pool2d, OpDesc{.kind = OpKind::window,
                                         .arity = 1,
                                         .infer = &adaptive_infer,
                                         .kernel = &adaptive_kernel,
                                         .grad = &grad::rule::adaptive_avg_pool2d});
LT_DEFINE_OP(max_pool2d_backward, OpDesc{.kind = OpKind::window,
                                         .arity = 2,
                                         .infer = &max_pool2d_backward_infer,
                                         .kernel = &max_pool2d_backward_kernel,
                                         .grad = &grad::rule::max_pool2d_backward});

}  // namespace lt::pool
