#pragma once
// 2-D convolution and its two gradients as ops. All three work through columns (im2col): the
// forward pass and the weight gradient multiply by an image's columns, the input gradient makes
// columns by a product and adds them back into the image (col2im). So a backward pass needs no
// padded, permuted or transposed copies of its operands.
#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/ops/contraction_grad.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/gemm.hpp"
#include "lazytensor/ops/kernels/gemm_bf16.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/tiled_product.hpp"

namespace lt::contraction {

/// conv2d's attributes (Conv2dAttrs) in the names of its geometry; the gradients' attributes
/// add a size (Conv2dGradAttrs).
struct ConvParams {
  std::int64_t sh, sw, ph, pw, dh, dw, groups;
  explicit ConvParams(const Conv2dAttrs& c)
      : sh(c.stride_h), sw(c.stride_w), ph(c.pad_h), pw(c.pad_w), dh(c.dilation_h), dw(c.dilation_w), groups(c.groups) {}
  static std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d) {
    return checked_window_extent(in, k, s, p, d, false, "conv2d window");
  }
};

/// Sizes of one convolution: input [N, C, H, W], weight [O, C/G, KH, KW], output [N, O, OH, OW].
struct ConvGeometry {
  ConvParams p;
  std::int64_t N, C, H, W, O, KH, KW, OH, OW;
  std::int64_t G = p.groups, cg = C / G, og = O / G, patch = cg * KH * KW, pixels = OH * OW;
};

namespace detail {

/// Checks an op's attributes and operands and returns its parameters.
inline ConvParams check_conv(const char* what, std::span<const Meta> in, const Conv2dAttrs& a) {
  LT_CHECK(in[0].shape.rank() == 4 && in[1].shape.rank() == 4, what, " expects 4-d operands, got ", in[0].shape,
           " and ", in[1].shape);
  LT_CHECK(is_floating(in[0].dtype) && in[0].dtype == in[1].dtype,
           "the operands must have the same floating dtype (f32, f64 or bf16)");
  const ConvParams p(a);
  LT_CHECK(p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0 && p.ph >= 0 && p.pw >= 0 && p.groups > 0,
           "stride and dilation must be positive, padding non-negative, groups positive");
  return p;
}

/// Checks that an output [N, O, OH, OW] is the convolution's of an input [N, C, H, W] and a
/// kernel [O, C/G, KH, KW], and returns the geometry.
inline ConvGeometry conv_geometry(const ConvParams& p, const Shape& x, const Shape& w, const Shape& y) {
  LT_CHECK(x[1] % p.groups == 0 && w[0] % p.groups == 0 && w[1] * p.groups == x[1], "channels: input ", x[1],
           ", weight ", w, " and groups ", p.groups, " do not fit");
  ConvGeometry g{p, x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3]};
  LT_CHECK(ConvParams::out_size(g.H, g.KH, p.sh, p.ph, p.dh) == g.OH && ConvParams::out_size(g.W, g.KW, p.sw, p.pw, p.dw) == g.OW &&
               g.OH > 0 && g.OW > 0 && y[0] == g.N && y[1] == g.O,
           "the gradient ", y, " is not the output of a convolution of ", x, " with ", w);
  return g;
}

/// Calls f(std::integral_constant<int, B>{}) where `blocks` is some B in 1..4 and returns true,
/// else returns false: the short rows of one to four 32-byte blocks get a row length fixed at
/// compile time.
template <class F>
bool with_blocks(std::int64_t blocks, F&& f) {
  switch (blocks) {
    case 1: f(std::integral_constant<int, 1>{}); return true;
    case 2: f(std::integral_constant<int, 2>{}); return true;
    case 3: f(std::integral_constant<int, 3>{}); return true;
    case 4: f(std::integral_constant<int, 4>{}); return true;
    default: return false;
  }
}

/// dst[0, n) = src[0, n) for the short rows of an image (a few to a few dozen values): copied
/// in place in fixed blocks, where a call to memmove per row would cost more than the copy.
template <class T>
[[gnu::always_inline]] inline void copy_row(const T* src, std::int64_t n, T* dst) {
  constexpr std::int64_t block = 32 / sizeof(T);
  if (n < block) {
    for (std::int64_t k = 0; k < block; ++k)
      if (k < n) dst[k] = src[k];
    return;
  }
  std::int64_t i = 0;
  for (; i + block <= n; i += block) std::memcpy(dst + i, src + i, sizeof(T) * block);
  // The tail as one more block ending at n, overlapping the last: rows do not overlap.
  if (i < n) std::memcpy(dst + n - block, src + n - block, sizeof(T) * block);
}

/// `rows` rows of n >= 1 values, from rows `step` apart to rows n apart. Where n takes one to
/// four 32-byte blocks, each row is that many block copies (the last ending at n, overlapping
/// the one before), the same few instructions for every row: a loop over a row length known
/// only at run time cost more than the copy for rows of 8 to 32 values.
template <int Blocks, class T>
void copy_rows_in_blocks(const T* src, std::int64_t step, T* dst, std::int64_t n, std::int64_t rows) {
  constexpr std::int64_t block = 32 / sizeof(T);
  for (std::int64_t r = 0; r < rows; ++r, src += step, dst += n) {
    for (int b = 0; b + 1 < Blocks; ++b) std::memcpy(dst + b * block, src + b * block, 32);
    std::memcpy(dst + n - block, src + n - block, 32);
  }
}
template <class T>
void copy_rows(const T* src, std::int64_t step, T* dst, std::int64_t n, std::int64_t rows) {
  constexpr std::int64_t block = 32 / sizeof(T);
  if (n >= block && with_blocks((n + block - 1) / block, [&](auto b) { copy_rows_in_blocks<b()>(src, step, dst, n, rows); }))
    return;
  for (std::int64_t r = 0; r < rows; ++r, src += step, dst += n) copy_row(src, n, dst);
}

/// dst row r += src row r for `rows` rows of n values, src rows n apart and dst rows `step`
/// apart; a row of one to four whole 32-byte blocks takes a fixed sequence of adds.
template <int Blocks, class T>
void add_rows_in_blocks(const T* src, T* dst, std::int64_t step, std::int64_t rows) {
  constexpr int n = Blocks * static_cast<int>(32 / sizeof(T));
  for (std::int64_t r = 0; r < rows; ++r, src += n, dst += step)
    for (int j = 0; j < n; ++j) dst[j] += src[j];
}
template <class T>
void add_rows(const T* src, std::int64_t src_step, T* dst, std::int64_t step, std::int64_t n, std::int64_t rows) {
  constexpr std::int64_t block = 32 / sizeof(T);
  if (src_step == n && n % block == 0 && with_blocks(n / block, [&](auto b) { add_rows_in_blocks<b()>(src, dst, step, rows); }))
    return;
  for (std::int64_t r = 0; r < rows; ++r, src += src_step, dst += step)
    for (std::int64_t j = 0; j < n; ++j) dst[j] += src[j];  // vectorised
}

/// Where one kernel offset reads inside the image: output rows [r0, r1) for kernel row ki,
/// output columns [c0, c1) for kernel column kj, and the input row and column that output
/// (0, 0) reads (negative in the padding). Known per offset, so the loops over output rows
/// test nothing per row.
struct KernelOffset {
  std::int64_t r0, r1, c0, c1, first_row, first_col;
};
inline std::int64_t inside_from(std::int64_t first, std::int64_t stride, std::int64_t out) {
  return first >= 0 ? 0 : std::min(out, (-first + stride - 1) / stride);
}
inline std::int64_t inside_to(std::int64_t first, std::int64_t stride, std::int64_t in, std::int64_t out, std::int64_t from) {
  return first >= in ? from : std::max(from, std::min(out, (in - 1 - first) / stride + 1));
}
inline KernelOffset kernel_offset(const ConvGeometry& g, std::int64_t ki, std::int64_t kj) {
  const ConvParams& p = g.p;
  KernelOffset k{0, 0, 0, 0, ki * p.dh - p.ph, kj * p.dw - p.pw};
  k.r0 = inside_from(k.first_row, p.sh, g.OH);
  k.r1 = inside_to(k.first_row, p.sh, g.H, g.OH, k.r0);
  k.c0 = inside_from(k.first_col, p.sw, g.OW);
  k.c1 = inside_to(k.first_col, p.sw, g.W, g.OW, k.c0);
  return k;
}

/// Writes the columns of one group of one image (cg channels of H x W at `img`): row
/// (c, ki, kj), at cols + row * ld, holds for each output pixel the value its window reads
/// there, 0 in the padding.
/// im2col without padding and with stride 1 along rows, for rows of OW values that take
/// Blocks 32-byte blocks: every column row is OH runs copied by the same few instructions, and
/// the block count is chosen once per image, not once per run (a call per column row cost
/// more than its copies on rows of 8 to 32 values).
template <int Blocks, class T>
void im2col_unpadded(const ConvGeometry& g, const T* img, T* cols, std::int64_t ld) {
  const ConvParams& p = g.p;
  for (std::int64_t c = 0; c < g.cg; ++c)
    for (std::int64_t ki = 0; ki < g.KH; ++ki)
      for (std::int64_t kj = 0; kj < g.KW; ++kj)
        copy_rows_in_blocks<Blocks>(img + (c * g.H + ki * p.dh) * g.W + kj * p.dw, p.sh * g.W,
                                    cols + ((c * g.KH + ki) * g.KW + kj) * ld, g.OW, g.OH);
}

template <class T>
void im2col(const ConvGeometry& g, const T* img, T* cols, std::int64_t ld) {
  const ConvParams& p = g.p;
  if (constexpr std::int64_t block = 32 / sizeof(T);
      p.ph == 0 && p.pw == 0 && p.sw == 1 && g.OW >= block &&
      with_blocks((g.OW + block - 1) / block, [&](auto b) { im2col_unpadded<b()>(g, img, cols, ld); }))
    return;
  // Channels innermost: an offset's ranges are worked out (with divisions) once per call.
  for (std::int64_t ki = 0; ki < g.KH; ++ki)
    for (std::int64_t kj = 0; kj < g.KW; ++kj) {
      const KernelOffset k = kernel_offset(g, ki, kj);
      for (std::int64_t c = 0; c < g.cg; ++c) {
        T* row = cols + ((c * g.KH + ki) * g.KW + kj) * ld;
        if (k.r0 > 0) std::fill(row, row + k.r0 * g.OW, T(0));  // rows in the padding (a call each, so tested)
        if (k.r1 < g.OH) std::fill(row + k.r1 * g.OW, row + g.OH * g.OW, T(0));
        if (k.r0 >= k.r1) continue;
        const T* src = img + (c * g.H + k.r0 * p.sh + k.first_row) * g.W + k.first_col;
        T* dst = row + k.r0 * g.OW;
        const std::int64_t step = p.sh * g.W;
        if (p.sw == 1 && k.c0 == 0 && k.c1 == g.OW) {  // no padding along the row: one copy
          copy_rows(src, step, dst, g.OW, k.r1 - k.r0);
          continue;
        }
        for (std::int64_t r = k.r0; r < k.r1; ++r, src += step, dst += g.OW) {
          std::fill(dst, dst + k.c0, T(0));
          if (p.sw == 1) copy_row(src + k.c0, k.c1 - k.c0, dst + k.c0);
          else
            for (std::int64_t oj = k.c0; oj < k.c1; ++oj) dst[oj] = src[oj * p.sw];
          std::fill(dst + k.c1, dst + g.OW, T(0));
        }
      }
    }
}

/// col2im without padding and with stride 1 along rows, for rows of OW = Blocks x 32 bytes:
/// every column row adds OH runs by the same few instructions (as im2col_unpadded).
template <int Blocks, class T>
void col2im_unpadded(const ConvGeometry& g, const T* cols, T* img) {
  const ConvParams& p = g.p;
  for (std::int64_t ki = 0; ki < g.KH; ++ki)
    for (std::int64_t kj = 0; kj < g.KW; ++kj)
      for (std::int64_t c = 0; c < g.cg; ++c)
        add_rows_in_blocks<Blocks>(cols + ((c * g.KH + ki) * g.KW + kj) * g.pixels,
                                   img + (c * g.H + ki * p.dh) * g.W + kj * p.dw, p.sh * g.W, g.OH);
}

/// The reverse of im2col: adds each column value into the input element it was read from.
template <class T>
void col2im(const ConvGeometry& g, const T* cols, T* img) {
  const ConvParams& p = g.p;
  if (constexpr std::int64_t block = 32 / sizeof(T);
      p.ph == 0 && p.pw == 0 && p.sw == 1 && g.OW % block == 0 &&
      with_blocks(g.OW / block, [&](auto b) { col2im_unpadded<b()>(g, cols, img); }))
    return;
  // Channels innermost, as in im2col; each input element still adds its offsets' values in
  // (ki, kj) order, since channels never share an element.
  for (std::int64_t ki = 0; ki < g.KH; ++ki)
    for (std::int64_t kj = 0; kj < g.KW; ++kj) {
      const KernelOffset k = kernel_offset(g, ki, kj);
      if (k.r0 >= k.r1) continue;
      for (std::int64_t c = 0; c < g.cg; ++c) {
        const T* src = cols + ((c * g.KH + ki) * g.KW + kj) * g.pixels + k.r0 * g.OW;
        T* dst = img + (c * g.H + k.r0 * p.sh + k.first_row) * g.W + k.first_col;
        const std::int64_t step = p.sh * g.W;
        if (p.sw == 1) {  // contiguous
          add_rows(src + k.c0, g.OW, dst + k.c0, step, k.c1 - k.c0, k.r1 - k.r0);
          continue;
        }
        for (std::int64_t r = k.r0; r < k.r1; ++r, src += g.OW, dst += step)
          for (std::int64_t oj = k.c0; oj < k.c1; ++oj) dst[oj * p.sw] += src[oj];
      }
    }
}

/// A buffer per thread for columns: every element is written before it is read, so it is
/// neither zeroed nor allocated again for the next image or step.
template <class T>
T* column_buffer(std::int64_t elements) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < static_cast<std::size_t>(elements)) buffer.resize(static_cast<std::size_t>(elements));
  return buffer.data();
}

/// Runs f(n, group, cols) for every (image n, group) in parallel, cols being the thread's
/// column buffer of patch x pixels values of the compute type.
template <class F>
void for_each_image_group(const ConvGeometry& g, DType dtype, F&& f) {
  kernels::visit_compute(dtype, [&]<class T>(Tag<T>) {
    if constexpr (std::is_floating_point_v<T>) {
      kernels::parallel_blocks(g.N * g.G, 1, [&](std::int64_t begin, std::int64_t end) {
        T* cols = column_buffer<T>(g.patch * g.pixels);
        for (std::int64_t task = begin; task < end; ++task) f(task / g.G, task % g.G, cols);
      });
    }
  });
}

/// `kernel` on two low-precision operands widened to f32, its result rounded once into `out`:
/// f16 products, and bf16 ones where the CPU has no bf16 instructions (or LT_BF16_GEMM=plain).
inline void widened_to_f32(void (*kernel)(std::span<const View>, const View&, const Attrs&), std::span<const View> in,
                           const View& out, const Attrs& attrs) {
  Array x = Array::empty(DType::f32, in[0].shape), w = Array::empty(DType::f32, in[1].shape);
  Array y = Array::empty(DType::f32, out.shape);
  kernels::copy_strided(in[0], x.view);
  kernels::copy_strided(in[1], w.view);
  const std::array<View, 2> wide = {x.view, w.view};
  kernel(wide, y.view, attrs);
  kernels::copy_strided(y.view, out);
}

/// The operand's values, in place when contiguous.
inline View contiguous_operand(const View& v, Array& copy) {
  if (v.contiguous()) return v;
  copy = Array::empty(v.dtype, v.shape);
  kernels::copy_strided(v, copy.view);
  return copy.view;
}

}  // namespace detail

inline Meta conv2d_infer(std::span<const Meta> in, const Attrs& a) {
  const ConvParams p = detail::check_conv("conv2d", in, decode<Conv2dAttrs>(a));
  const Shape &x = in[0].shape, &w = in[1].shape;
  LT_CHECK(x[1] % p.groups == 0 && w[0] % p.groups == 0 && w[1] * p.groups == x[1], "channels: input ", x[1],
           ", weight ", w, " and groups ", p.groups, " do not fit");
  std::int64_t oh = ConvParams::out_size(x[2], w[2], p.sh, p.ph, p.dh), ow = ConvParams::out_size(x[3], w[3], p.sw, p.pw, p.dw);
  LT_CHECK(oh > 0 && ow > 0, "the kernel ", w, " does not fit the padded input ", x);
  return {Shape{x[0], w[0], oh, ow}, in[0].dtype};
}

/// The output as one [O, OH x OW] matrix per image.
inline TileGeometry conv2d_geometry(std::span<const Meta>, const Meta& out) {
  return {out.shape[0], out.shape[1], out.shape[2] * out.shape[3]};
}
/// Floating results are computed in their own dtype: every such convolution runs tile by tile.
inline bool conv2d_fits_tiles(std::span<const Meta> in, const Meta& out) {
  return in.size() == 2 && is_floating(out.dtype) && !is_low_precision(out.dtype) && out.shape.numel() > 0;
}

namespace detail {
/// Output elements per tile: a tile and the epilogue's values made from it stay in L2.
inline constexpr std::int64_t conv_tile_elements = 32768;
}  // namespace detail

/// Per image, in parallel: per group, the image's columns [patch, pixels] once, then the
/// weight's rows [og, patch] times them tile by tile (a group's output channels by blocks of
/// pixels, as the geometry alone decides), each tile where `sink` places it. The one path of
/// the op run alone and of a fused epilogue, so both give the same bits.
inline void conv2d_tiles(std::span<const View> in, const Meta& out, const Attrs& attrs, TileSink& sink) {
  Array xc, wc;
  const View xv = detail::contiguous_operand(in[0], xc), wv = detail::contiguous_operand(in[1], wc);
  const ConvGeometry g = detail::conv_geometry(ConvParams(decode<Conv2dAttrs>(attrs)), xv.shape, wv.shape, out.shape);
  const std::int64_t cols = std::min(g.pixels, std::max<std::int64_t>(256, detail::conv_tile_elements / g.og));
  const std::int64_t rows = std::min(g.og, std::max<std::int64_t>(1, detail::conv_tile_elements / cols));
  kernels::visit_compute(out.dtype, [&]<class T>(Tag<T>) {
    if constexpr (std::is_floating_point_v<T>) {
      kernels::parallel_blocks(g.N, 1, [&](std::int64_t begin, std::int64_t end) {
        T* image_cols = detail::column_buffer<T>(g.patch * g.pixels);
        for (std::int64_t n = begin; n < end; ++n)
          for (std::int64_t grp = 0; grp < g.G; ++grp) {
            detail::im2col(g, xv.ptr<T>() + (n * g.C + grp * g.cg) * g.H * g.W, image_cols, g.pixels);
            const T* weight = wv.ptr<T>() + grp * g.og * g.patch;
            for (std::int64_t r0 = 0; r0 < g.og; r0 += rows)
              for (std::int64_t j0 = 0; j0 < g.pixels; j0 += cols) {
                const OutputTile tile{n, grp * g.og + r0, std::min(rows, g.og - r0), j0, std::min(cols, g.pixels - j0)};
                std::int64_t ld = g.pixels;
                T* dst = reinterpret_cast<T*>(sink.place(tile, ld));
                kernels::gemm_tile<T>({weight + r0 * g.patch, g.patch, 1, image_cols + j0, g.pixels, 1, dst, ld, tile.rows,
                                       g.patch, tile.cols},
                                      {0, tile.rows, 0, tile.cols});
                sink.done(tile);
              }
          }
      });
    }
  });
}

/// conv2d of two bf16 operands on bf16 instructions: per image and group, in parallel, the
/// columns in bf16 (moved as 16-bit units), their product with the weight in f32, rounded
/// once into `out`.
inline void conv2d_bf16(std::span<const View> in, const View& out, const Attrs& attrs) {
  Array xc, wc, keep;
  const View xv = detail::contiguous_operand(in[0], xc), wv = detail::contiguous_operand(in[1], wc);
  const ConvGeometry g = detail::conv_geometry(ConvParams(decode<Conv2dAttrs>(attrs)), xv.shape, wv.shape, out.shape);
  const View c = out.dtype == DType::f32 && out.contiguous() ? out : (keep = Array::empty(DType::f32, out.shape)).view;
  const auto* x = xv.ptr<std::uint16_t>();
  const auto* w = wv.ptr<bfloat16>();
  float* y = c.ptr<float>();
  kernels::parallel_blocks(g.N * g.G, 1, [&](std::int64_t begin, std::int64_t end) {
    std::uint16_t* cols = detail::column_buffer<std::uint16_t>(g.patch * g.pixels);
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t n = task / g.G, grp = task % g.G;
      detail::im2col(g, x + (n * g.C + grp * g.cg) * g.H * g.W, cols, g.pixels);
      kernels::gemm_bf16_serial({w + grp * g.og * g.patch, g.patch, 1, reinterpret_cast<const bfloat16*>(cols), g.pixels, 1,
                                 y + (n * g.O + grp * g.og) * g.pixels, g.pixels, g.og, g.patch, g.pixels});
    }
  });
  if (c.data != out.data) kernels::copy_strided(c, out);
}

inline void conv2d_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  if (kernels::product_takes_bf16(in, out)) return conv2d_bf16(in, out, attrs);
  if (is_low_precision(out.dtype)) return detail::widened_to_f32(&conv2d_kernel, in, out, attrs);
  const std::array<Meta, 2> metas = {Meta{in[0].shape, in[0].dtype}, Meta{in[1].shape, in[1].dtype}};
  const Meta m{out.shape, out.dtype};
  TilesInPlace sink(out, conv2d_geometry(metas, m));
  conv2d_tiles(in, m, attrs, sink);
}

/// conv2d's input gradient: inputs {gradient of the output [N, O, OH, OW], weight
/// [O, C/G, KH, KW]}, attrs conv2d's and then the input's H and W; result [N, C, H, W].
inline Meta conv2d_input_grad_infer(std::span<const Meta> in, const Attrs& a) {
  const auto attrs = decode<Conv2dGradAttrs>(a);
  const ConvParams p = detail::check_conv("conv2d_input_grad", in, attrs.conv);
  const Shape &y = in[0].shape, &w = in[1].shape;
  const Shape x{y[0], w[1] * p.groups, attrs.h, attrs.w};
  LT_CHECK(x[2] > 0 && x[3] > 0, "the input's size must be positive, got ", attrs.h, "x", attrs.w);
  detail::conv_geometry(p, x, w, y);
  return {x, in[0].dtype};
}

/// conv2d_input_grad of two bf16 operands on bf16 instructions: per (image, group), the
/// columns in f32 from weight^T times the gradient, added back into an f32 image, which is
/// rounded once into `out`.
inline void conv2d_input_grad_bf16(std::span<const View> in, const View& out, const Attrs& attrs) {
  Array yc, wc;
  const View yv = detail::contiguous_operand(in[0], yc), wv = detail::contiguous_operand(in[1], wc);
  const ConvGeometry g = detail::conv_geometry(ConvParams(decode<Conv2dGradAttrs>(attrs).conv), out.shape, wv.shape, yv.shape);
  const auto* w = wv.ptr<bfloat16>();
  const auto* y = yv.ptr<bfloat16>();
  kernels::parallel_blocks(g.N * g.G, 1, [&](std::int64_t begin, std::int64_t end) {
    const std::int64_t image = g.cg * g.H * g.W;
    float* cols = detail::column_buffer<float>(g.patch * g.pixels + image);
    float* img = cols + g.patch * g.pixels;
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t n = task / g.G, grp = task % g.G;
      kernels::gemm_bf16_serial({w + grp * g.og * g.patch, 1, g.patch, y + (n * g.O + grp * g.og) * g.pixels, g.pixels, 1,
                                 cols, g.pixels, g.patch, g.og, g.pixels});
      std::fill(img, img + image, 0.0f);
      detail::col2im(g, cols, img);
      bfloat16* dst = out.ptr<bfloat16>() + (n * g.C + grp * g.cg) * g.H * g.W;
      for (std::int64_t e = 0; e < image; ++e) dst[e] = bfloat16(img[e]);
    }
  });
}

/// Per (image, group): columns = weight^T [patch, og] times the gradient [og, pixels], added
/// back into the zeroed image.
inline void conv2d_input_grad_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  if (kernels::product_takes_bf16(in, out)) return conv2d_input_grad_bf16(in, out, attrs);
  if (is_low_precision(out.dtype)) return detail::widened_to_f32(&conv2d_input_grad_kernel, in, out, attrs);
  Array yc, wc;
  const View yv = detail::contiguous_operand(in[0], yc), wv = detail::contiguous_operand(in[1], wc);
  const ConvGeometry g = detail::conv_geometry(ConvParams(decode<Conv2dGradAttrs>(attrs).conv), out.shape, wv.shape, yv.shape);
  detail::for_each_image_group(g, out.dtype, [&]<class T>(std::int64_t n, std::int64_t grp, T* cols) {
    kernels::gemm<T>(wv.ptr<T>() + grp * g.og * g.patch, 1, g.patch, yv.ptr<T>() + (n * g.O + grp * g.og) * g.pixels,
                     g.pixels, 1, cols, g.patch, g.og, g.pixels);
    T* img = out.ptr<T>() + (n * g.C + grp * g.cg) * g.H * g.W;
    std::fill(img, img + g.cg * g.H * g.W, T(0));
    detail::col2im(g, cols, img);
  });
}

/// conv2d's weight gradient: inputs {input [N, C, H, W], gradient of the output
/// [N, O, OH, OW]}, attrs conv2d's and then the kernel's KH and KW; result [O, C/G, KH, KW].
inline Meta conv2d_weight_grad_infer(std::span<const Meta> in, const Attrs& a) {
  const auto attrs = decode<Conv2dGradAttrs>(a);
  const ConvParams p = detail::check_conv("conv2d_weight_grad", in, attrs.conv);
  const Shape &x = in[0].shape, &y = in[1].shape;
  LT_CHECK(x[1] % p.groups == 0 && attrs.h > 0 && attrs.w > 0, "input channels ", x[1], " and groups ", p.groups,
           " do not fit, or the kernel size ", attrs.h, "x", attrs.w, " is not positive");
  const Shape w{y[1], x[1] / p.groups, attrs.h, attrs.w};
  detail::conv_geometry(p, x, w, y);
  return {w, in[0].dtype};
}

/// The images split into a fixed number of runs (a function of N only, so the sums are the
/// same for every thread count). Per run and group: the gradient [og, images x pixels] times
/// the images' columns, transposed; the runs' sums then add in run order.
inline void conv2d_weight_grad_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  if (is_low_precision(out.dtype) && !kernels::product_takes_bf16(in, out))
    return detail::widened_to_f32(&conv2d_weight_grad_kernel, in, out, attrs);
  Array xc, yc;
  const View xv = detail::contiguous_operand(in[0], xc), yv = detail::contiguous_operand(in[1], yc);
  const ConvGeometry g = detail::conv_geometry(ConvParams(decode<Conv2dGradAttrs>(attrs).conv), xv.shape, out.shape, yv.shape);
  const std::int64_t weights = g.O * g.patch;
  // Runs of up to 8 images, at most 16 runs. A run's images are multiplied a few at a time,
  // their columns at most 64K values, which stay in L2 for the product that reads them.
  std::int64_t runs = std::clamp<std::int64_t>((g.N + 7) / 8, 1, 16);
  runs = std::clamp<std::int64_t>(runs, 1, std::max<std::int64_t>(1, (std::int64_t{1} << 24) / std::max<std::int64_t>(weights, 1)));
  const std::int64_t per_run = std::max<std::int64_t>(1, (g.N + runs - 1) / runs);
  const std::int64_t chunk = std::clamp<std::int64_t>((std::int64_t{1} << 16) / std::max<std::int64_t>(g.patch * g.pixels, 1), 1, per_run);
  // bf16 operands (AVX512-BF16): columns and gradient rows moved as 16-bit units (E), their
  // products and the sums in f32, rounded once at the end.
  const bool bf16 = out.dtype == DType::bf16;
  kernels::visit_compute(bf16 ? DType::f32 : out.dtype, [&]<class T>(Tag<T>) {
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<T> sums(static_cast<std::size_t>(runs * weights), T(0));
      auto accumulate = [&]<class E>(Tag<E>) {
        constexpr bool wide = std::is_same_v<E, T>;
        kernels::parallel_blocks(runs, 1, [&](std::int64_t begin, std::int64_t end) {
          const std::int64_t k_max = chunk * g.pixels;
          E* cols = detail::column_buffer<E>(g.patch * k_max + g.og * k_max + (wide ? g.og * g.patch : 0));
          E* grad = cols + g.patch * k_max;  // the chunk's gradient rows, [og, images x pixels]
          // The bf16 kernel writes f32: a type that depends on E, so that no compiler checks
          // that call for an f64 T, where it is never made.
          using P = std::conditional_t<wide, T, float>;
          P* product = nullptr;
          if constexpr (wide) product = grad + g.og * k_max;
          else product = detail::column_buffer<P>(g.og * g.patch);  // another thread_local buffer
          for (std::int64_t run = begin; run < end; ++run) {
            T* sum = sums.data() + run * weights;
            const std::int64_t n0 = run * per_run, n1 = std::min(g.N, n0 + per_run);
            for (std::int64_t c0 = n0; c0 < n1; c0 += chunk) {
              const std::int64_t images = std::min(chunk, n1 - c0), k = images * g.pixels;
              for (std::int64_t grp = 0; grp < g.G; ++grp) {
                for (std::int64_t i = 0; i < images; ++i) {
                  detail::im2col(g, xv.ptr<E>() + ((c0 + i) * g.C + grp * g.cg) * g.H * g.W, cols + i * g.pixels, k);
                  for (std::int64_t o = 0; o < g.og; ++o) {
                    const E* src = yv.ptr<E>() + ((c0 + i) * g.O + grp * g.og + o) * g.pixels;
                    std::copy(src, src + g.pixels, grad + o * k + i * g.pixels);
                  }
                }
                if constexpr (wide)
                  kernels::gemm<T>(grad, k, 1, cols, 1, k, product, g.og, k, g.patch);
                else
                  kernels::gemm_bf16_serial({reinterpret_cast<const bfloat16*>(grad), k, 1,
                                             reinterpret_cast<const bfloat16*>(cols), 1, k, product, g.patch, g.og, k,
                                             g.patch});
                T* dst = sum + grp * g.og * g.patch;
                for (std::int64_t e = 0; e < g.og * g.patch; ++e) dst[e] += product[e];
              }
            }
          }
        });
      };
      if constexpr (std::is_same_v<T, float>) {
        if (bf16) accumulate(Tag<std::uint16_t>{});
        else accumulate(Tag<T>{});
      } else {
        accumulate(Tag<T>{});
      }
      for (std::int64_t run = 1; run < runs; ++run)
        for (std::int64_t e = 0; e < weights; ++e) sums[static_cast<std::size_t>(e)] += sums[static_cast<std::size_t>(run * weights + e)];
      if (bf16)
        for (std::int64_t e = 0; e < weights; ++e) out.ptr<bfloat16>()[e] = bfloat16(static_cast<float>(sums[static_cast<std::size_t>(e)]));
      else
        std::copy(sums.begin(), sums.begin() + weights, out.ptr<T>());
    }
  });
}

inline constexpr TiledProduct conv2d_tiled{&conv2d_fits_tiles, &conv2d_geometry, &conv2d_tiles};

LT_DEFINE_OP(conv2d, OpDesc{.kind = OpKind::contraction,
                            .arity = 2,
                            .infer = &conv2d_infer,
                            .kernel = &conv2d_kernel,
                            .grad = &grad::rule::conv2d,
                            .tiled = &conv2d_tiled,
                            .bf16 = Bf16Operands::storage});
// conv2d's gradients are products too: bf16 operands as stored, as conv2d's.
LT_DEFINE_OP(conv2d_input_grad, OpDesc{.kind = OpKind::contraction,
                                       .arity = 2,
                                       .infer = &conv2d_input_grad_infer,
                                       .kernel = &conv2d_input_grad_kernel,
                                       .grad = &grad::rule::conv2d_input_grad,
                                       .bf16 = Bf16Operands::storage});
LT_DEFINE_OP(conv2d_weight_grad, OpDesc{.kind = OpKind::contraction,
                                        .arity = 2,
                                        .infer = &conv2d_weight_grad_infer,
                                        .kernel = &conv2d_weight_grad_kernel,
                                        .grad = &grad::rule::conv2d_weight_grad,
                                        .bf16 = Bf16Operands::storage});

}  // namespace lt::contraction
