#pragma once
// Contractions: matmul with torch.matmul's rank rules and broadcast batch dims, and conv2d.
#include <algorithm>
#include <array>
#include <vector>

#include "lazytensor/ops/contraction_grad.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/elementwise_rules.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/kernels/gemm.hpp"
#include "lazytensor/ops/kernels/gemm_tiles.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/tiled_product.hpp"

namespace lt::contraction {

/// Operands in the compute dtype: the view itself when it already has it, else a converted
/// contiguous copy (kept alive by `keep`).
inline View as_dtype(const View& v, DType t, Array& keep) {
  if (v.dtype == t) return v;
  keep = Array::empty(t, v.shape);
  kernels::copy_strided(v, keep.view);
  return keep.view;
}

/// A matmul operand seen as a batch of matrices: vectors become a 1-row (left) or 1-column
/// (right) matrix, as torch.matmul does.
struct MatrixOperand {
  Shape batch;
  Strides batch_strides;
  std::int64_t rows, cols, row_stride, col_stride;

  MatrixOperand(const Shape& s, const Strides& st, bool left) {
    int r = s.rank();
    if (r == 1) {
      rows = left ? 1 : s[0];
      cols = left ? s[0] : 1;
      row_stride = left ? 0 : st[0];
      col_stride = left ? st[0] : 0;
      return;
    }
    rows = s[r - 2], cols = s[r - 1], row_stride = st[r - 2], col_stride = st[r - 1];
    for (int d = 0; d < r - 2; ++d) batch.push_back(s[d]), batch_strides.push_back(st[d]);
  }
};

inline Meta matmul_infer(std::span<const Meta> in, const Attrs&) {
  const Shape &a = in[0].shape, &b = in[1].shape;
  LT_CHECK(a.rank() >= 1 && b.rank() >= 1, "both operands need at least one dim, got ", a, " and ", b);
  for (const Meta& m : in) LT_CHECK(m.dtype != DType::bf16 && m.dtype != DType::boolean, "no kernel for ", name(m.dtype));
  MatrixOperand l(a, contiguous_strides(a), true), r(b, contiguous_strides(b), false);
  LT_CHECK(l.cols == r.rows, "inner sizes differ: ", a, " and ", b);
  Shape out;
  LT_CHECK(try_broadcast(l.batch, r.batch, out), "batch dims of ", a, " and ", b, " do not broadcast");
  if (a.rank() > 1) out.push_back(l.rows);
  if (b.rank() > 1) out.push_back(r.cols);
  return {out, result_type(in)};
}

/// The output of a matmul of these operands as [batches, n, m] matrices (vectors count as
/// one-row or one-column matrices, as in matmul_infer).
inline TileGeometry matmul_geometry(std::span<const Meta> in, const Meta& out) {
  MatrixOperand l(in[0].shape, contiguous_strides(in[0].shape), true), r(in[1].shape, contiguous_strides(in[1].shape), false);
  const std::int64_t matrix = l.rows * r.cols;
  return {matrix > 0 ? out.shape.numel() / matrix : 0, l.rows, r.cols};
}

/// Whether a matmul writes its result in its own dtype, so that it can run tile by tile into
/// the caller's memory (integers narrower than i64 are computed in i64, then narrowed).
inline bool matmul_fits_tiles(std::span<const Meta> in, const Meta& out) {
  return in.size() == 2 && kernels::compute_dtype(out.dtype) == out.dtype && out.shape.numel() > 0;
}

/// The product tile by tile, each tile where `sink` places it: the one path both the op's
/// kernel and a fused epilogue take, so both compute the same bits.
inline void matmul_tiles(std::span<const View> in, const Meta& out, const Attrs&, TileSink& sink) {
  const DType t = out.dtype;
  Array keep_a, keep_b;
  View a = as_dtype(in[0], t, keep_a), b = as_dtype(in[1], t, keep_b);
  MatrixOperand l(a.shape, a.strides, true), r(b.shape, b.strides, false);
  Shape batch;
  try_broadcast(l.batch, r.batch, batch);
  Strides la = broadcast_strides(l.batch, l.batch_strides, batch), rb = broadcast_strides(r.batch, r.batch_strides, batch);
  std::int64_t n = l.rows, k = l.cols, m = r.cols, batches = batch.numel();
  // Batches and tiles of each product together, so that one large product still uses every core.
  kernels::visit_compute(t, [&]<class T>(Tag<T>) {
    kernels::parallel_gemm_placed<T>(
        batches, n, k, m,
        [&](std::int64_t bi) {
          kernels::OffsetWalker wa(batch, la, bi), wb(batch, rb, bi);
          return kernels::GemmArgs<T>{a.ptr<T>() + wa.offset(), l.row_stride, l.col_stride, b.ptr<T>() + wb.offset(),
                                      r.row_stride, r.col_stride, nullptr, m, n, k, m};
        },
        [&](std::int64_t bi, kernels::GemmTile tile, std::int64_t& ldc) {
          return reinterpret_cast<T*>(sink.place({bi, tile.i0, tile.rows, tile.j0, tile.cols}, ldc));
        },
        [&](std::int64_t bi, const kernels::GemmArgs<T>&, kernels::GemmTile tile) {
          sink.done({bi, tile.i0, tile.rows, tile.j0, tile.cols});
        });
  });
}

/// Places each tile in a contiguous [batches, n, m] array: the op run alone.
class TilesInPlace final : public TileSink {
 public:
  TilesInPlace(const View& c, TileGeometry g) : c_(c), g_(g) {}
  std::byte* place(const OutputTile& t, std::int64_t& ld) override {
    ld = g_.m;
    return c_.data + ((t.batch * g_.n + t.i0) * g_.m + t.j0) * static_cast<std::int64_t>(itemsize(c_.dtype));
  }
  void done(const OutputTile&) override {}

 private:
  View c_;
  TileGeometry g_;
};

inline void matmul_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  const DType t = kernels::compute_dtype(out.dtype);
  const std::array<Meta, 2> metas = {Meta{in[0].shape, in[0].dtype}, Meta{in[1].shape, in[1].dtype}};
  const Meta computed{out.shape, t};
  Array keep_c;
  View c = out.dtype == t ? out : (keep_c = Array::empty(t, out.shape)).view;
  TilesInPlace sink(c, matmul_geometry(metas, computed));
  matmul_tiles(in, computed, attrs, sink);
  if (c.data != out.data) kernels::copy_strided(c, out);
}

inline constexpr TiledProduct matmul_tiled{&matmul_fits_tiles, &matmul_geometry, &matmul_tiles};

/// attrs.ints: {stride h, stride w, pad h, pad w, dilation h, dilation w, groups}.
struct ConvParams {
  std::int64_t sh, sw, ph, pw, dh, dw, groups;
  explicit ConvParams(const Attrs& a)
      : sh(a.ints[0]), sw(a.ints[1]), ph(a.ints[2]), pw(a.ints[3]), dh(a.ints[4]), dw(a.ints[5]), groups(a.ints[6]) {}
  static std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d) {
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
  }
};

inline Meta conv2d_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  LT_CHECK(a.ints.size() == 7, "conv2d takes {stride, padding, dilation, groups} attributes");
  ConvParams p(a);
  LT_CHECK(x.rank() == 4 && w.rank() == 4, "expected input [N, C, H, W] and weight [O, C/groups, kH, kW], got ", x,
           " and ", w);
  LT_CHECK(is_floating(in[0].dtype) && in[0].dtype == in[1].dtype && in[0].dtype != DType::bf16,
           "input and weight must have the same floating dtype");
  LT_CHECK(p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0 && p.ph >= 0 && p.pw >= 0 && p.groups > 0,
           "stride and dilation must be positive, padding non-negative, groups positive");
  LT_CHECK(x[1] % p.groups == 0 && w[0] % p.groups == 0 && w[1] * p.groups == x[1], "channels: input ", x[1],
           ", weight ", w, " and groups ", p.groups, " do not fit");
  std::int64_t oh = ConvParams::out_size(x[2], w[2], p.sh, p.ph, p.dh), ow = ConvParams::out_size(x[3], w[3], p.sw, p.pw, p.dw);
  LT_CHECK(oh > 0 && ow > 0, "the kernel ", w, " does not fit the padded input ", x);
  return {Shape{x[0], w[0], oh, ow}, in[0].dtype};
}

/// im2col + GEMM per (image, group): columns hold each output pixel's receptive field.
inline void conv2d_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  ConvParams p(attrs);
  // Operands are read in place when contiguous; strided views are packed first.
  Array xc, wc;
  auto packed = [](const View& v, Array& copy) {
    if (v.contiguous()) return v;
    copy = Array::empty(v.dtype, v.shape);
    kernels::copy_strided(v, copy.view);
    return copy.view;
  };
  const View xv = packed(in[0], xc), wv = packed(in[1], wc);
  const Shape &x = in[0].shape, &w = in[1].shape;
  std::int64_t N = x[0], C = x[1], H = x[2], W = x[3], O = w[0], KH = w[2], KW = w[3], G = p.groups;
  std::int64_t OH = out.shape[2], OW = out.shape[3], cg = C / G, og = O / G, patch = cg * KH * KW, pixels = OH * OW;
  kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
    if constexpr (std::is_floating_point_v<T>) {
      kernels::parallel_blocks(N * G, 1, [&](std::int64_t begin, std::int64_t end) {
        std::vector<T> cols(static_cast<std::size_t>(patch * pixels));
        for (std::int64_t task = begin; task < end; ++task) {
          std::int64_t n = task / G, g = task % G;
          const T* img = xv.ptr<T>() + (n * C + g * cg) * H * W;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t ki = 0; ki < KH; ++ki)
              for (std::int64_t kj = 0; kj < KW; ++kj) {
                T* row = cols.data() + ((c * KH + ki) * KW + kj) * pixels;
                // Output columns [lo, hi) read inside the image along W; the rest is padding.
                std::int64_t first = kj * p.dw - p.pw;  // input column of output column 0
                std::int64_t lo = first >= 0 ? 0 : std::min(OW, (-first + p.sw - 1) / p.sw);
                std::int64_t hi = first >= W ? lo : std::max(lo, std::min(OW, (W - 1 - first) / p.sw + 1));
                for (std::int64_t oi = 0; oi < OH; ++oi) {
                  std::int64_t ii = oi * p.sh - p.ph + ki * p.dh;
                  T* dst = row + oi * OW;
                  if (ii < 0 || ii >= H) {
                    std::fill(dst, dst + OW, T(0));
                    continue;
                  }
                  const T* src = img + (c * H + ii) * W + first;
                  std::fill(dst, dst + lo, T(0));
                  if (p.sw == 1) std::copy(src + lo, src + hi, dst + lo);
                  else
                    for (std::int64_t oj = lo; oj < hi; ++oj) dst[oj] = src[oj * p.sw];
                  std::fill(dst + hi, dst + OW, T(0));
                }
              }
          const T* wg = wv.ptr<T>() + g * og * patch;
          T* dst = out.ptr<T>() + (n * O + g * og) * pixels;
          kernels::gemm<T>(wg, patch, 1, cols.data(), pixels, 1, dst, og, patch, pixels);
        }
      });
    }
  });
}

inline constexpr OpDesc matmul{.id = OpId::matmul,
                               .name = "matmul",
                               .kind = OpKind::contraction,
                               .arity = 2,
                               .infer = &matmul_infer,
                               .kernel = &matmul_kernel,
                               .grad = &grad::rule::matmul,
                               .tiled = &matmul_tiled};
inline constexpr OpDesc conv2d{OpId::conv2d, "conv2d", OpKind::contraction, 2, &conv2d_infer, &conv2d_kernel, nullptr,
                               &grad::rule::conv2d};

inline constexpr std::array all = {&matmul, &conv2d};

}  // namespace lt::contraction
