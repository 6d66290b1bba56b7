#pragma once
// Reference helpers of the movement and indexing op tests: expected values by index
// arithmetic over the input Refs, never from the library.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "op_harness.hpp"

namespace lt::test::movement {

using Idx = std::vector<std::int64_t>;

inline const double nan = std::numeric_limits<double>::quiet_NaN();

/// The multi-index of row-major position k in `shape`.
inline Idx unravel(std::int64_t k, const Idx& shape) {
  Idx i(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    i[d] = k % shape[d];
    k /= shape[d];
  }
  return i;
}

inline std::int64_t ravel(const Idx& i, const Idx& shape) {
  std::int64_t k = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) k = k * shape[d] + i[d];
  return k;
}

inline double at(const Ref& r, const Idx& i) { return r.v[static_cast<std::size_t>(ravel(i, r.shape))]; }

/// A Ref of `shape` whose element at each multi-index is f(index), rounded to t.
inline Ref build(Idx shape, DType t, const std::function<double(const Idx&)>& f) {
  Ref r{std::move(shape), t, {}};
  for (std::int64_t k = 0; k < r.numel(); ++k) r.v.push_back(round_to(t, f(unravel(k, r.shape))));
  return r;
}

inline Ref with_shape(Ref r, Idx shape) {
  r.shape = std::move(shape);
  return r;
}

inline Ref scalar_ref(DType t, double v) { return Ref{{}, t, {round_to(t, v)}}; }

/// Random in-range indices of dtype t for a dim of size `extent`.
inline Ref index_ref(Idx shape, std::int64_t extent, DType t = DType::i64, std::uint32_t seed = 5) {
  return random_ref(std::move(shape), t, seed, 0, static_cast<double>(extent - 1));
}

// ---- view ops ----

/// x permuted: out[o] = x[i] with i[perm[k]] = o[k].
inline Ref permuted(const Ref& x, const Idx& perm) {
  Idx shape;
  for (auto p : perm) shape.push_back(x.shape[static_cast<std::size_t>(p)]);
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i(o.size());
    for (std::size_t k = 0; k < perm.size(); ++k) i[static_cast<std::size_t>(perm[k])] = o[k];
    return at(x, i);
  });
}

/// x broadcast to `shape` by index arithmetic (size-1 dims repeat, leading dims are new).
inline Ref expanded(const Ref& x, const Idx& shape) {
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i(x.shape.size());
    std::size_t lead = shape.size() - x.shape.size();
    for (std::size_t d = 0; d < x.shape.size(); ++d) i[d] = x.shape[d] == 1 ? 0 : o[d + lead];
    return at(x, i);
  });
}

/// Elements start, start+step, ... below end of dim (all already in range).
inline Ref sliced(const Ref& x, std::size_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  Idx shape = x.shape;
  shape[dim] = end > start ? (end - start + step - 1) / step : 0;
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    i[dim] = start + o[dim] * step;
    return at(x, i);
  });
}

// ---- copying movement ops ----

/// Concatenation along `dim` of Refs of one rank, skipping shape [0], converted to `t`.
inline Ref concatenated(const std::vector<Ref>& parts, std::size_t dim, DType t) {
  std::vector<const Ref*> kept;
  for (const Ref& p : parts)
    if (!(p.shape.size() == 1 && p.shape[0] == 0)) kept.push_back(&p);
  if (kept.empty()) return Ref{{0}, t, {}};
  Idx shape = kept[0]->shape;
  shape[dim] = 0;
  for (const Ref* p : kept) shape[dim] += p->shape[dim];
  return build(shape, t, [&](const Idx& o) {
    Idx i = o;
    for (const Ref* p : kept) {
      if (i[dim] < p->shape[dim]) return at(*p, i);
      i[dim] -= p->shape[dim];
    }
    return nan;
  });
}

/// Constant padding by index arithmetic: pads are (before, after) pairs from the last dim.
inline Ref padded(const Ref& x, const Idx& pads, double value) {
  Idx shape = x.shape;
  std::size_t r = x.shape.size();
  for (std::size_t k = 0; k < pads.size() / 2; ++k) shape[r - 1 - k] += pads[2 * k] + pads[2 * k + 1];
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    for (std::size_t k = 0; k < pads.size() / 2; ++k) {
      std::size_t d = r - 1 - k;
      i[d] = o[d] - pads[2 * k];
      if (i[d] < 0 || i[d] >= x.shape[d]) return value;
    }
    return at(x, i);
  });
}

inline Ref flipped(const Ref& x, const std::vector<std::size_t>& dims) {
  return build(x.shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    for (auto d : dims) i[d] = x.shape[d] - 1 - o[d];
    return at(x, i);
  });
}

/// tril (lower) or triu of the last two dims.
inline Ref triangle(const Ref& x, std::int64_t diagonal, bool lower) {
  return build(x.shape, x.dtype, [&](const Idx& o) {
    std::int64_t i = o[o.size() - 2], j = o[o.size() - 1];
    bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
    return keep ? at(x, o) : 0.0;
  });
}

// ---- indexing ops ----

/// x's slices of `dim` at the positions in `index` (rank 0 or 1); a zero-dim x stays so.
inline Ref selected(const Ref& x, std::size_t dim, const Ref& index) {
  if (x.shape.empty()) return x;
  Idx shape = x.shape;
  shape[dim] = index.numel();
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    i[dim] = static_cast<std::int64_t>(index.v[static_cast<std::size_t>(o[dim])]);
    return at(x, i);
  });
}

/// torch.gather: out[o] = x[o with o[dim] replaced by index[o]].
inline Ref gathered(const Ref& x, std::size_t dim, const Ref& index) {
  return build(index.shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    if (!i.empty()) i[dim] = static_cast<std::int64_t>(at(index, o));
    return at(x, i);
  });
}

/// self with src[e] added at self[e with e[dim] replaced by index[e]], in index order.
inline Ref scattered(const Ref& self, std::size_t dim, const Ref& index, const Ref& src) {
  Ref out = self;
  for (std::int64_t k = 0; k < index.numel(); ++k) {
    Idx e = unravel(k, index.shape);
    Idx o = e;
    if (!o.empty()) o[dim] = static_cast<std::int64_t>(at(index, e));
    double& target = out.v[static_cast<std::size_t>(ravel(o, out.shape))];
    target = round_intermediate(self.dtype, self.dtype == DType::boolean ? (target != 0 || at(src, e) != 0) : target + at(src, e));
  }
  for (double& x : out.v) x = round_to(self.dtype, x);
  return out;
}

}  // namespace lt::test::movement
