#pragma once
// Gradient rules of the windows over [N, C, H, W]. Averages are separable: the forward pass is
// Ah x Aw^T for two window-weight matrices that depend on shapes alone, so the gradient is
// Ah^T g Aw, two products. Max pooling's gradient is one op (max_pool2d_backward), which
// sends each output's gradient to the element its window chose; that op's own gradient finds
// the choices with ops: gathering every window with a host-made index table, taking argmax.
#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::grad::rule {

/// One dim's windows: [begin, end) of each output's window and the count it divides by.
struct Windows {
  std::vector<std::int64_t> begin, end, divisor;
};

/// The [in, out] matrix whose column o holds 1 / divisor over window o's rows: the transpose
/// of the forward averaging matrix.
inline GradValue window_weights(GradBuilder& b, const Windows& w, std::int64_t in, DType dtype) {
  auto out = static_cast<std::int64_t>(w.begin.size());
  std::vector<double> m(static_cast<std::size_t>(in * out), 0.0);
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t i = w.begin[o]; i < w.end[o]; ++i) m[static_cast<std::size_t>(i * out + o)] = 1.0 / static_cast<double>(w.divisor[o]);
  return b.constant(m, Shape{in, out}, dtype);
}

/// x = Ah^T g Aw with the [in, out] weight matrices of both dims.
inline void average_back(GradContext& c, const Windows& rows, const Windows& cols) {
  const GradValue& g = c.grad;
  const Shape& xs = c.input(0).shape();
  GradValue wh = window_weights(*g.builder, rows, xs[2], g.dtype());
  GradValue ww = window_weights(*g.builder, cols, xs[3], g.dtype());
  c.set(0, grad::matmul(grad::matmul(wh, g), transpose_last(ww)));
}

/// Pool2dAttrs; windows clipped to the padded input, as the forward kernel.
inline void avg_pool2d(GradContext& c) {
  const auto a = decode<Pool2dAttrs>(c.attrs);
  auto windows = [&](int k, std::int64_t in, std::int64_t out) {
    Windows w;
    for (std::int64_t o = 0; o < out; ++o) {
      std::int64_t lo = o * a.stride(k) - a.pad(k), hi = std::min(lo + a.kernel(k), in + a.pad(k));
      std::int64_t clo = std::max<std::int64_t>(lo, 0), chi = std::min(hi, in);
      w.begin.push_back(clo);
      w.end.push_back(chi);
      w.divisor.push_back(a.count_include_pad ? hi - lo : chi - clo);
    }
    return w;
  };
  const Shape &xs = c.input(0).shape(), &gs = c.grad.shape();
  average_back(c, windows(0, xs[2], gs[2]), windows(1, xs[3], gs[3]));
}

/// Window o of `out` over `in` spans [floor(o in / out), ceil((o + 1) in / out)).
inline void adaptive_avg_pool2d(GradContext& c) {
  auto windows = [](std::int64_t in, std::int64_t out) {
    Windows w;
    for (std::int64_t o = 0; o < out; ++o) {
      w.begin.push_back(o * in / out);
      w.end.push_back(((o + 1) * in + out - 1) / out);
      w.divisor.push_back(w.end.back() - w.begin.back());
    }
    return w;
  };
  const Shape &xs = c.input(0).shape(), &gs = c.grad.shape();
  average_back(c, windows(xs[2], gs[2]), windows(xs[3], gs[3]));
}

/// Where each output of max_pool2d over x chose its element: indices into x padded with -inf
/// (so that every window, ceil_mode's last ones included, lies inside) and flattened per plane
/// to [N, C, hp * wp], one per output, as [N, C, OH * OW]. Found by gathering every window
/// with a host-made index table and taking argmax, the first largest as the forward kernel.
struct MaxPoolChoice {
  GradValue index;
  std::int64_t hp, wp, after[2];
};

inline MaxPoolChoice max_pool_choice(const GradValue& x, const Shape& gs, const Pool2dAttrs& a) {
  const Shape& xs = x.shape();
  const std::int64_t n = xs[0], ch = xs[1], kh = a.kernel_h, kw = a.kernel_w;
  MaxPoolChoice m{};
  for (int k : {0, 1})
    m.after[k] = std::max<std::int64_t>(
        0, (gs[2 + k] - 1) * a.stride(k) + (a.kernel(k) - 1) * a.dilation(k) + 1 - a.pad(k) - xs[2 + k]);
  m.hp = xs[2] + a.pad_h + m.after[0];
  m.wp = xs[3] + a.pad_w + m.after[1];
  const std::int64_t windows = gs[2] * gs[3], taps = kh * kw;
  std::vector<double> table;
  table.reserve(static_cast<std::size_t>(windows * taps));
  for (std::int64_t oi = 0; oi < gs[2]; ++oi)
    for (std::int64_t oj = 0; oj < gs[3]; ++oj)
      for (std::int64_t ki = 0; ki < kh; ++ki)
        for (std::int64_t kj = 0; kj < kw; ++kj)
          table.push_back(static_cast<double>((oi * a.stride_h + ki * a.dilation_h) * m.wp + oj * a.stride_w +
                                              kj * a.dilation_w));
  GradValue index = grad::expand(x.builder->constant(table, Shape{1, 1, windows * taps}, DType::i64),
                                 Shape{n, ch, windows * taps});
  GradValue padded =
      grad::pad(x, {a.pad_w, m.after[1], a.pad_h, m.after[0]}, -std::numeric_limits<double>::infinity());
  GradValue values = grad::reshape(grad::gather(grad::reshape(padded, Shape{n, ch, m.hp * m.wp}), 2, index),
                                   Shape{n, ch, windows, taps});
  const std::int64_t last[] = {3};
  GradValue chosen = grad::gather(grad::reshape(index, Shape{n, ch, windows, taps}), 3, reduce(OpId::argmax, values, last, true));
  m.index = grad::reshape(chosen, Shape{n, ch, windows});
  return m;
}

/// One op sends each output's gradient to its window's choice (max_pool2d_backward).
inline void max_pool2d(GradContext& c) { c.set(0, apply(OpId::max_pool2d_backward, {c.grad, c.input(0)}, c.attrs)); }

/// Linear in the output's gradient: each output reads the incoming gradient at its window's
/// choice. x only picks the elements, so its gradient is zero wherever it is defined.
inline void max_pool2d_backward(GradContext& c) {
  const GradValue &gg = c.grad, &x = c.input(1);
  const Shape& gs = c.input(0).shape();
  if (c.needs_grad(0)) {
    const auto a = decode<Pool2dAttrs>(c.attrs);
    MaxPoolChoice m = max_pool_choice(x, gs, a);
    const Shape& xs = x.shape();
    GradValue padded = grad::pad(gg, {a.pad_w, m.after[1], a.pad_h, m.after[0]}, 0.0);
    c.set(0, grad::reshape(grad::gather(grad::reshape(padded, Shape{xs[0], xs[1], m.hp * m.wp}), 2, m.index), gs));
  }
  if (c.needs_grad(1)) c.set(1, zeros_like(x));
}

}  // namespace lt::grad::rule
