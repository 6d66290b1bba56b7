#pragma once
// Contractions: matmul with torch.matmul's rank rules and broadcast batch dims, and the
// convolutions (convolution.hpp).
#include <algorithm>
#include <array>
#include <vector>

#include "lazytensor/ops/contraction_grad.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/convolution.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/elementwise_rules.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/kernels/gemm.hpp"
#include "lazytensor/ops/kernels/gemm_bf16.hpp"
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
  for (const Meta& m : in) LT_CHECK(m.dtype != DType::boolean, "no kernel for ", name(m.dtype));
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
  return in.size() == 2 && !is_low_precision(out.dtype) && kernels::compute_dtype(out.dtype) == out.dtype &&
         out.shape.numel() > 0;
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

/// A product of two bf16 operands by AVX512-BF16 (kernels/gemm_bf16.hpp), its f32 result
/// rounded once into `out`.
inline void matmul_bf16(std::span<const View> in, const View& out) {
  MatrixOperand l(in[0].shape, in[0].strides, true), r(in[1].shape, in[1].strides, false);
  Shape batch;
  try_broadcast(l.batch, r.batch, batch);
  const Strides la = broadcast_strides(l.batch, l.batch_strides, batch), rb = broadcast_strides(r.batch, r.batch_strides, batch);
  const std::int64_t n = l.rows, k = l.cols, m = r.cols, batches = batch.numel();
  Array keep_c;
  const View c = out.dtype == DType::f32 && out.contiguous() ? out : (keep_c = Array::empty(DType::f32, out.shape)).view;
  const auto* a = in[0].ptr<bfloat16>();
  const auto* b = in[1].ptr<bfloat16>();
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    kernels::OffsetWalker wa(batch, la, bi), wb(batch, rb, bi);
    kernels::gemm_bf16({a + wa.offset(), l.row_stride, l.col_stride, b + wb.offset(), r.row_stride, r.col_stride,
                        c.ptr<float>() + bi * n * m, m, n, k, m});
  }
  if (c.data != out.data) kernels::copy_strided(c, out);
}

inline void matmul_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  if (kernels::product_takes_bf16(in, out)) return matmul_bf16(in, out);
  // Low-precision operands are taken as stored: widened to f32 here where the CPU has no
  // products of their own (f16 always; bf16 without AVX512-BF16).
  const DType t = is_low_precision(out.dtype) ? dtype_info(out.dtype).compute : kernels::compute_dtype(out.dtype);
  const std::array<Meta, 2> metas = {Meta{in[0].shape, in[0].dtype}, Meta{in[1].shape, in[1].dtype}};
  const Meta computed{out.shape, t};
  Array keep_c;
  View c = out.dtype == t ? out : (keep_c = Array::empty(t, out.shape)).view;
  TilesInPlace sink(c, matmul_geometry(metas, computed));
  matmul_tiles(in, computed, attrs, sink);
  if (c.data != out.data) kernels::copy_strided(c, out);
}

inline constexpr TiledProduct matmul_tiled{&matmul_fits_tiles, &matmul_geometry, &matmul_tiles};

// bf16 operands as stored: the kernel multiplies them on bf16 instructions where it can.
LT_DEFINE_OP(matmul, OpDesc{.kind = OpKind::contraction,
                            .arity = 2,
                            .infer = &matmul_infer,
                            .kernel = &matmul_kernel,
                            .grad = &grad::rule::matmul,
                            .tiled = &matmul_tiled,
                            .bf16 = Bf16Operands::storage});
}  // namespace lt::contraction
