#pragma once
// Fused attention: softmax(q k^T * scale + mask) v in one op, per batch matrix and block of
// query rows, so that the [L, S] scores live in a per-thread block of L1/L2 and never reach
// memory (the composite form writes them, then the weights, and reads both back). Each block
// is computed on one thread in an order fixed by the shapes alone: the same bits at any thread
// count. The gradient (ops/attention_grad.hpp) recomputes the weights from q, k and the mask.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "lazytensor/ops/attention_grad.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/gemm.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::contraction {

/// q [*, L, E], k [*, S, E], v [*, S, Ev] with the same batch dims, and optionally an additive
/// mask that broadcasts to [*, L, S], all f32 or all f64; AttentionAttrs: the scale. Gives [*, L, Ev].
inline Meta attention_infer(std::span<const Meta> in, const Attrs& attrs) {
  LT_CHECK(in.size() == 3 || in.size() == 4, "expects q, k, v and an optional mask, got ", in.size(), " operands");
  decode<AttentionAttrs>(attrs);  // checks that the scale is its one attribute
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  LT_CHECK(q.rank() >= 2 && k.rank() == q.rank() && v.rank() == q.rank(), "expects q [*, L, E], k [*, S, E] and v [*, S, Ev] of one rank, got ",
           q, ", ", k, " and ", v);
  const int r = q.rank();
  for (int d = 0; d < r - 2; ++d)
    LT_CHECK(k[d] == q[d] && v[d] == q[d], "q ", q, ", k ", k, " and v ", v, " must have the same batch dims");
  LT_CHECK(k[r - 1] == q[r - 1] && v[r - 2] == k[r - 2], "expects q [*, L, E], k [*, S, E] and v [*, S, Ev], got ", q, ", ", k,
           " and ", v);
  for (const Meta& m : in)
    LT_CHECK(m.dtype == in[0].dtype && (m.dtype == DType::f32 || m.dtype == DType::f64),
             "operands must all be f32 or all f64, got ", name(m.dtype));
  if (in.size() == 4) {
    Shape scores = q;
    scores[r - 1] = k[r - 2];
    Shape both;
    LT_CHECK(try_broadcast(in[3].shape, scores, both) && both == scores, "mask ", in[3].shape,
             " does not broadcast to the scores ", scores);
  }
  Shape out = q;
  out[r - 1] = v[r - 1];
  return {out, in[0].dtype};
}

namespace detail {

/// Query rows per block: the block's scores (rows x S values) stay within about 32 KiB.
inline std::int64_t attention_rows(std::int64_t s) { return std::clamp<std::int64_t>(8192 / std::max<std::int64_t>(s, 1), 1, 64); }

/// c[rows, cols] (row stride ldc) = a b, elements by strides, on the calling thread: the
/// small-product kernels where the level has them and they fit, else BLAS or Eigen's GEMM at the
/// level (kernels::gemm_tile), never a scalar loop.
template <class T>
void block_product(const T* a, std::int64_t a_row, std::int64_t a_col, const T* b, std::int64_t b_row, std::int64_t b_col,
                   T* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols, std::int64_t k) {
  kernels::gemm_tile<T>({a, a_row, a_col, b, b_row, b_col, c, ldc, rows, k, cols}, {0, rows, 0, cols});
}

/// One row of scores in place: exp(x - max(x)), returning their sum. A row of -inf only gives
/// NaN, as the composite softmax. The maximum and the sum run in packet lanes, folded at the
/// end: an order fixed by the row's length, so any split of rows among threads gives the same bits.
template <class T>
T exp_shifted(T* x, std::int64_t n) {
  using namespace Eigen::internal;
  using P = kernels::packet_t<T>;
  constexpr int w = kernels::packet_lanes<T>;
  T most = -std::numeric_limits<T>::infinity();
  std::int64_t j = 0;
  if constexpr (w > 1) {
    if (n >= w) {
      P m = ploadu<P>(x);
      for (j = w; j + w <= n; j += w) m = pmax(m, ploadu<P>(x + j));
      most = predux_max(m);
    }
  }
  for (; j < n; ++j) most = std::max(most, x[j]);
  T sum = 0;
  j = 0;
  // f32 only: the f64 polynomial clamps its argument, so -inf (a masked key) would not give 0.
  if constexpr (w > 1 && std::is_same_v<T, float>) {
    const P shift = pset1<P>(most);
    P acc = pset1<P>(T(0));
    for (; j + w <= n; j += w) {
      P y = kernels::pk::exp_float(psub(ploadu<P>(x + j), shift));
      pstoreu(x + j, y);
      acc = padd(acc, y);
    }
    sum = predux(acc);
  }
  for (; j < n; ++j) sum += (x[j] = std::exp(x[j] - most));
  return sum;
}

template <class T>
void attention_run(std::span<const View> in, const View& out, const Attrs& attrs) {
  const View &q = in[0], &k = in[1], &v = in[2];
  const int r = q.shape.rank();
  const std::int64_t l = q.shape[r - 2], e = q.shape[r - 1], s = k.shape[r - 2], ev = v.shape[r - 1];
  const Shape batch(std::vector<std::int64_t>(q.shape.begin(), q.shape.end() - 2));
  const std::int64_t batches = batch.numel();
  if (batches == 0 || l == 0 || ev == 0) return;
  T* o = out.ptr<T>();
  if (s == 0) {  // softmax over nothing: NaN, as the composite form
    std::fill(o, o + out.numel(), std::numeric_limits<T>::quiet_NaN());
    return;
  }
  const T scale = static_cast<T>(decode<AttentionAttrs>(attrs).scale);
  Shape scores = q.shape;
  scores[r - 1] = s;
  const bool masked = in.size() == 4;
  const Strides ms = masked ? broadcast_strides(in[3].shape, in[3].strides, scores) : Strides{};
  auto batch_strides = [&](const Strides& st) { return Strides(std::vector<std::int64_t>(st.begin(), st.begin() + (r - 2))); };
  const Strides qb = batch_strides(q.strides), kb = batch_strides(k.strides), vb = batch_strides(v.strides);
  const Strides mb = masked ? batch_strides(ms) : Strides{};
  const std::int64_t rows = attention_rows(s), blocks = (l + rows - 1) / rows;
  // A task is a run of row blocks of one batch matrix, which transposes k once: all of them
  // where the batch matrices alone keep the threads busy. Each row's bits are the same either way.
  const std::int64_t per_task = batches >= 16 ? blocks : 1, runs = (blocks + per_task - 1) / per_task;
  kernels::parallel_blocks(batches * runs, 1, [&](std::int64_t begin, std::int64_t end) {
    // The block's scores, then k^T contiguous: the product kernels that broadcast q's values
    // over rows of k^T beat dot products along a short E (a head's 64 values, say).
    thread_local std::vector<T> buffer;
    const auto need = static_cast<std::size_t>(rows * s + e * s);
    if (buffer.size() < need) buffer.resize(need);
    T* sc = buffer.data();
    T* kt = sc + rows * s;
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t bi = task / runs, first = (task % runs) * per_task;
      const T* kp = k.ptr<T>() + kernels::OffsetWalker(batch, kb, bi).offset();
      const T* vp = v.ptr<T>() + kernels::OffsetWalker(batch, vb, bi).offset();
      for (std::int64_t j = 0; j < s; ++j)
        for (std::int64_t p = 0; p < e; ++p) kt[p * s + j] = kp[j * k.strides[r - 2] + p * k.strides[r - 1]];
      for (std::int64_t block = first; block < std::min(blocks, first + per_task); ++block) {
      const std::int64_t r0 = block * rows, n = std::min(rows, l - r0);
      const T* qp = q.ptr<T>() + kernels::OffsetWalker(batch, qb, bi).offset() + r0 * q.strides[r - 2];
      block_product<T>(qp, q.strides[r - 2], q.strides[r - 1], kt, s, 1, sc, s, n, s, e);
      const T* mp = masked ? in[3].ptr<T>() + kernels::OffsetWalker(batch, mb, bi).offset() + r0 * ms[r - 2] : nullptr;
      for (std::int64_t i = 0; i < n; ++i) {
        T* row = sc + i * s;
        for (std::int64_t j = 0; j < s; ++j) row[j] *= scale;
        if (masked)
          for (std::int64_t j = 0; j < s; ++j) row[j] += mp[i * ms[r - 2] + j * ms[r - 1]];
        const T inv = T(1) / exp_shifted(row, s);
        for (std::int64_t j = 0; j < s; ++j) row[j] *= inv;
      }
      block_product<T>(sc, s, 1, vp, v.strides[r - 2], v.strides[r - 1], o + (bi * l + r0) * ev, ev, n, ev, s);
      }
    }
  });
}

}  // namespace detail

inline void attention_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  if (out.dtype == DType::f64) detail::attention_run<double>(in, out, attrs);
  else detail::attention_run<float>(in, out, attrs);
}

LT_DEFINE_OP(attention, OpDesc{.kind = OpKind::contraction,
                               .arity = -1,
                               .infer = &attention_infer,
                               .kernel = &attention_kernel,
                               .grad = &grad::rule::attention});
}  // namespace lt::contraction
