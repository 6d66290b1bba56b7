#pragma once
// Indexing ops: index_select, gather, scatter_add. Indices are i32 or i64 and must lie in
// [0, size) of the indexed dim; a value outside it is found only when the kernel runs, which
// then throws lt::Error naming the first bad position (the same for any number of threads).
#include <algorithm>
#include <array>
#include <string_view>
#include <type_traits>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/indexing_grad.hpp"
#include "lazytensor/ops/kernels/copy.hpp"

namespace lt::indexing {

inline void check_index_dtype(const Meta& index) {
  LT_CHECK(index.dtype == DType::i32 || index.dtype == DType::i64, "index must be i32 or i64, not ",
           name(index.dtype));
}
inline void check_dim(std::int64_t dim, int rank) {
  LT_CHECK(dim >= 0 && dim < std::max(rank, 1), "dim ", dim, " is out of range for rank ", rank);
}

/// Extent and stride of the indexed dim; a zero-dim value reads as one element.
inline std::int64_t dim_extent(const View& v, int dim) { return v.shape.rank() == 0 ? 1 : v.shape[dim]; }
inline std::int64_t dim_stride(const View& v, int dim) { return v.shape.rank() == 0 ? 0 : v.strides[dim]; }

/// out[e] = in[e with its `dim` coordinate replaced by the index at e]. `index_strides` walk
/// the index in out's shape. Every other coordinate of out must be valid in `in`.
inline void gather_elements(std::string_view op, const View& in, const View& index, const Strides& index_strides,
                            int dim, const View& out) {
  std::int64_t n = out.numel(), extent = dim_extent(in, dim), step = dim_stride(in, dim);
  Strides base = in.strides;  // in walked in out's shape, its `dim` coordinate supplied by the index
  if (base.rank() > 0) base[dim] = 0;
  kernels::FirstPosition bad(n);
  kernels::visit_unit(itemsize(out.dtype), [&]<class U>(Tag<U>) {
    const U* src = in.ptr<U>();
    U* dst = out.ptr<U>();
    kernels::parallel_blocks(n, kernels::parallel_threshold, [&](std::int64_t b, std::int64_t e) {
      kernels::OffsetWalker wi(out.shape, index_strides, b), ws(out.shape, base, b);
      for (std::int64_t k = b; k < e; ++k, wi.next(), ws.next()) {
        std::int64_t i = kernels::index_at(index, wi.offset());
        if (i < 0 || i >= extent) return bad.report(k);
        dst[k] = src[ws.offset() + i * step];
      }
    });
  });
  if (bad.found()) {
    kernels::OffsetWalker wi(out.shape, index_strides, bad.get());
    fail(op, ": index ", kernels::index_at(index, wi.offset()), " is out of range for dim ", dim, " of size ", extent);
  }
}

// index_select. Inputs: self, index (rank 0 or 1). DimAttrs, non-negative.
inline Meta index_select_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  const std::int64_t dim = decode<DimAttrs>(a).dim;
  const Meta& index = in[1];
  check_index_dtype(index);
  LT_CHECK(index.shape.rank() <= 1, "index must have rank 0 or 1, got rank ", index.shape.rank());
  check_dim(dim, s.rank());
  if (s.rank() == 0) {
    LT_CHECK(index.shape.numel() == 1, "a zero-dim input takes one index, got ", index.shape.numel());
    return {s, in[0].dtype};
  }
  Shape out = s;
  out[static_cast<int>(dim)] = index.shape.numel();
  return {out, in[0].dtype};
}
inline void index_select_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  const auto dim = static_cast<int>(decode<DimAttrs>(a).dim);
  // The index varies along `dim` only: zero strides elsewhere.
  Strides index_strides = Dims::filled(out.shape.rank(), 0);
  if (out.shape.rank() > 0 && in[1].shape.rank() == 1) index_strides[dim] = in[1].strides[0];
  gather_elements("index_select", in[0], in[1], index_strides, dim, out);
}

// gather. Inputs: self, index of the same rank. DimAttrs, non-negative. The result
// has the index's shape; the index may be smaller than self in every dim but `dim`.
inline Meta gather_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape &s = in[0].shape, &is = in[1].shape;
  const std::int64_t dim = decode<DimAttrs>(a).dim;
  check_index_dtype(in[1]);
  check_dim(dim, s.rank());
  LT_CHECK(is.rank() == s.rank(), "index must have the rank of the input, got ", is, " for ", s);
  for (int d = 0; d < s.rank(); ++d)
    LT_CHECK(d == dim || is[d] <= s[d], "index ", is, " is larger than the input ", s, " in dim ", d);
  return {is, in[0].dtype};
}
inline void gather_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  gather_elements("gather", in[0], in[1], in[1].strides, static_cast<int>(decode<DimAttrs>(a).dim), out);
}

// scatter_add. Inputs: self, index, src, all of one rank; src has self's dtype. DimAttrs,
// non-negative. out = self, then out[index[e] in dim] += src[e] for each e of index.
inline Meta scatter_add_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape &s = in[0].shape, &is = in[1].shape, &ss = in[2].shape;
  const std::int64_t dim = decode<DimAttrs>(a).dim;
  check_index_dtype(in[1]);
  LT_CHECK(in[2].dtype == in[0].dtype, "src must have the dtype of self, got ", name(in[2].dtype), " and ",
           name(in[0].dtype));
  check_dim(dim, s.rank());
  LT_CHECK(is.rank() == s.rank() && ss.rank() == s.rank(), "self, index and src must have one rank, got ", s, ", ",
           is, " and ", ss);
  for (int d = 0; d < s.rank(); ++d) {
    LT_CHECK(is[d] <= ss[d], "index ", is, " is larger than src ", ss, " in dim ", d);
    LT_CHECK(d == dim || is[d] <= s[d], "index ", is, " is larger than self ", s, " in dim ", d);
  }
  return {s, in[0].dtype};
}
/// Each line of the index along `dim` adds into its own line of the output, and no two
/// lines share an output element: lines run in parallel, each in index order, so the sums
/// are the same for any number of threads.
inline void scatter_add_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  const View &index = in[1], &src = in[2];
  kernels::copy_strided(in[0], out);
  if (index.numel() == 0) return;
  const auto dim = static_cast<int>(decode<DimAttrs>(a).dim);
  std::int64_t len = dim_extent(index, dim), extent = dim_extent(out, dim);
  std::int64_t index_step = dim_stride(index, dim), src_step = dim_stride(src, dim), out_step = dim_stride(out, dim);
  Shape lines = index.shape;
  Strides index_lines = index.strides, src_lines = src.strides, out_lines = out.strides;
  if (lines.rank() > 0)
    for (Dims* d : {&lines, &index_lines, &src_lines, &out_lines}) d->erase(dim);
  std::int64_t n_lines = index.numel() / len;
  kernels::FirstPosition bad(index.numel());
  visit(out.dtype, [&]<class T>(Tag<T>) {
    const T* s = src.ptr<T>();
    T* d = out.ptr<T>();
    kernels::parallel_for_each_block(n_lines, len, [&](std::int64_t b, std::int64_t e) {
      kernels::OffsetWalker wi(lines, index_lines, b), ws(lines, src_lines, b), wo(lines, out_lines, b);
      for (std::int64_t l = b; l < e; ++l, wi.next(), ws.next(), wo.next())
        for (std::int64_t j = 0; j < len; ++j) {
          std::int64_t i = kernels::index_at(index, wi.offset() + j * index_step);
          if (i < 0 || i >= extent) return bad.report(l * len + j);
          T& target = d[wo.offset() + i * out_step];
          T value = s[ws.offset() + j * src_step];
          if constexpr (std::is_same_v<T, bool>) target = target || value;
          else if constexpr (std::is_integral_v<T>)  // wraps on overflow, as PyTorch
            target = static_cast<T>(static_cast<std::uint64_t>(target) + static_cast<std::uint64_t>(value));
          else target += value;
        }
    });
  });
  if (bad.found()) {
    std::int64_t l = bad.get() / len, j = bad.get() % len;
    kernels::OffsetWalker wi(lines, index_lines, l);
    fail("scatter_add: index ", kernels::index_at(index, wi.offset() + j * index_step), " is out of range for dim ",
         dim, " of size ", extent);
  }
}

LT_DEFINE_OP(index_select, OpDesc{.kind = OpKind::movement,
                                  .arity = 2,
                                  .infer = &index_select_infer,
                                  .kernel = &index_select_kernel,
                                  .grad = &grad::rule::index_select});
LT_DEFINE_OP(gather, OpDesc{.kind = OpKind::movement,
                            .arity = 2,
                            .infer = &gather_infer,
                            .kernel = &gather_kernel,
                            .grad = &grad::rule::gather});
LT_DEFINE_OP(scatter_add, OpDesc{.kind = OpKind::movement,
                                 .arity = 3,
                                 .infer = &scatter_add_infer,
                                 .kernel = &scatter_add_kernel,
                                 .grad = &grad::rule::scatter_add,
                                 .bf16 = Bf16Operands::as_f32});

}  // namespace lt::indexing
