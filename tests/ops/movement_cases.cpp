// Reference cases of the movement and indexing ops, and tests of the composite movement
// functions and of their error paths. Expected values come from index arithmetic over the
// input Refs, never from the library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "op_harness.hpp"

namespace lt::test {
namespace {

using Idx = std::vector<std::int64_t>;
using In = const std::vector<Tensor>&;

const double nan = std::numeric_limits<double>::quiet_NaN();

/// The multi-index of row-major position k in `shape`.
Idx unravel(std::int64_t k, const Idx& shape) {
  Idx i(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    i[d] = k % shape[d];
    k /= shape[d];
  }
  return i;
}

std::int64_t ravel(const Idx& i, const Idx& shape) {
  std::int64_t k = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) k = k * shape[d] + i[d];
  return k;
}

double at(const Ref& r, const Idx& i) { return r.v[static_cast<std::size_t>(ravel(i, r.shape))]; }

/// A Ref of `shape` whose element at each multi-index is f(index), rounded to t.
Ref build(Idx shape, DType t, const std::function<double(const Idx&)>& f) {
  Ref r{std::move(shape), t, {}};
  for (std::int64_t k = 0; k < r.numel(); ++k) r.v.push_back(round_to(t, f(unravel(k, r.shape))));
  return r;
}

Ref with_shape(Ref r, Idx shape) {
  r.shape = std::move(shape);
  return r;
}

Ref scalar_ref(DType t, double v) { return Ref{{}, t, {round_to(t, v)}}; }

/// Random in-range indices of dtype t for a dim of size `extent`.
Ref index_ref(Idx shape, std::int64_t extent, DType t = DType::i64, std::uint32_t seed = 5) {
  return random_ref(std::move(shape), t, seed, 0, static_cast<double>(extent - 1));
}

// ---- view ops ----

/// x permuted: out[o] = x[i] with i[perm[k]] = o[k].
Ref permuted(const Ref& x, const Idx& perm) {
  Idx shape;
  for (auto p : perm) shape.push_back(x.shape[static_cast<std::size_t>(p)]);
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i(o.size());
    for (std::size_t k = 0; k < perm.size(); ++k) i[static_cast<std::size_t>(perm[k])] = o[k];
    return at(x, i);
  });
}


LT_OP_TEST(reshape) {
  Ref x = random_ref({2, 3, 4}, DType::f32, 101);
  Ref xi = random_ref({2, 3}, DType::i64, 102, -50, 50);
  Ref xb = random_ref({2, 2, 2}, DType::boolean, 103);
  Ref s = scalar_ref(DType::f64, 2.5);
  return {
      {"[2,3,4] to [4,6]", {x}, [](In in) { return in[0].reshape({4, 6}); }, with_shape(x, {4, 6})},
      {"-1 extent", {x}, [](In in) { return in[0].reshape({-1, 3}); }, with_shape(x, {8, 3})},
      {"to rank 1", {x}, [](In in) { return in[0].reshape({24}); }, with_shape(x, {24})},
      {"of a transpose, which needs a copy", {xi}, [](In in) { return in[0].t().reshape({6}); },
       with_shape(permuted(xi, {1, 0}), {6})},
      {"merging dims of a permute (a view)", {x},
       [](In in) { return in[0].permute({2, 0, 1}).reshape({4, 6}); },
       with_shape(permuted(x, {2, 0, 1}), {4, 6})},
      {"rank 0 to [1, 1]", {s}, [](In in) { return in[0].reshape({1, 1}); }, with_shape(s, {1, 1})},
      {"[1] to rank 0", {with_shape(s, {1})}, [](In in) { return in[0].reshape({}); }, s},
      {"size 0", {random_ref({0, 3})}, [](In in) { return in[0].reshape({3, 0, 2}); }, Ref{{3, 0, 2}, DType::f32, {}}},
      {"i64", {xi}, [](In in) { return in[0].reshape({3, 2}); }, with_shape(xi, {3, 2})},
      {"bool", {xb}, [](In in) { return in[0].reshape({4, 2}); }, with_shape(xb, {4, 2})},
      {"NaN passes", {special_ref()}, [](In in) { return in[0].reshape({2, 5}); }, with_shape(special_ref(), {2, 5})},
  };
}

LT_OP_TEST(permute) {
  Ref x = random_ref({2, 3, 4}, DType::f32, 111);
  Ref xi = random_ref({3, 2}, DType::i64, 112, -9, 9);
  Ref xb = random_ref({2, 1, 3}, DType::boolean, 113);
  Ref z = random_ref({2, 0, 3});
  Ref s = scalar_ref(DType::f32, -1.5);
  return {
      {"(2, 0, 1)", {x}, [](In in) { return in[0].permute({2, 0, 1}); }, permuted(x, {2, 0, 1})},
      {"negative dims", {x}, [](In in) { return in[0].permute({-1, -3, -2}); }, permuted(x, {2, 0, 1})},
      {"identity", {x}, [](In in) { return in[0].permute({0, 1, 2}); }, x},
      {"transpose i64", {xi}, [](In in) { return in[0].transpose(0, 1); }, permuted(xi, {1, 0})},
      {"t()", {xi}, [](In in) { return in[0].t(); }, permuted(xi, {1, 0})},
      {"bool", {xb}, [](In in) { return in[0].permute({1, 2, 0}); }, permuted(xb, {1, 2, 0})},
      {"size 0", {z}, [](In in) { return in[0].permute({2, 1, 0}); }, Ref{{3, 0, 2}, DType::f32, {}}},
      {"rank 0", {s}, [](In in) { return in[0].permute({}); }, s},
      {"NaN passes", {with_shape(special_ref(), {2, 5})}, [](In in) { return in[0].permute({1, 0}); },
       permuted(with_shape(special_ref(), {2, 5}), {1, 0})},
  };
}

/// x broadcast to `shape` by index arithmetic (size-1 dims repeat, leading dims are new).
Ref expanded(const Ref& x, const Idx& shape) {
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i(x.shape.size());
    std::size_t lead = shape.size() - x.shape.size();
    for (std::size_t d = 0; d < x.shape.size(); ++d) i[d] = x.shape[d] == 1 ? 0 : o[d + lead];
    return at(x, i);
  });
}

LT_OP_TEST(expand) {
  Ref x = random_ref({3, 1}, DType::f32, 121);
  Ref xi = random_ref({1, 4}, DType::i64, 122, -20, 20);
  Ref xb = random_ref({2, 1, 1}, DType::boolean, 123);
  Ref s = scalar_ref(DType::f64, 4.0);
  return {
      {"[3,1] to [2,3,4]", {x}, [](In in) { return in[0].expand({2, 3, 4}); }, expanded(x, {2, 3, 4})},
      {"-1 keeps an extent", {x}, [](In in) { return in[0].expand({-1, 5}); }, expanded(x, {3, 5})},
      {"i64 rows", {xi}, [](In in) { return in[0].expand({3, 4}); }, expanded(xi, {3, 4})},
      {"bool", {xb}, [](In in) { return in[0].expand({2, 3, 2}); }, expanded(xb, {2, 3, 2})},
      {"rank 0 to [2, 3]", {s}, [](In in) { return in[0].expand({2, 3}); }, expanded(s, {2, 3})},
      {"to size 0", {xi}, [](In in) { return in[0].expand({0, 4}); }, Ref{{0, 4}, DType::i64, {}}},
      {"same shape", {x}, [](In in) { return in[0].expand({3, 1}); }, x},
      {"NaN passes", {with_shape(special_ref(), {1, 10})}, [](In in) { return in[0].expand({2, 10}); },
       expanded(with_shape(special_ref(), {1, 10}), {2, 10})},
  };
}

/// Elements start, start+step, ... below end of dim (all already in range).
Ref sliced(const Ref& x, std::size_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  Idx shape = x.shape;
  shape[dim] = end > start ? (end - start + step - 1) / step : 0;
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    i[dim] = start + o[dim] * step;
    return at(x, i);
  });
}

LT_OP_TEST(slice) {
  Ref x = random_ref({4, 7}, DType::f32, 131);
  Ref x3 = random_ref({3, 5, 6}, DType::f64, 132);
  Ref xi = random_ref({9}, DType::i64, 133, -100, 100);
  Ref xb = random_ref({6, 2}, DType::boolean, 134);
  return {
      {"dim 1, step 2", {x}, [](In in) { return in[0].slice(1, 1, 6, 2); }, sliced(x, 1, 1, 6, 2)},
      {"dim 0, step 3", {x}, [](In in) { return in[0].slice(0, 0, 4, 3); }, sliced(x, 0, 0, 4, 3)},
      {"negative dim and bounds", {x}, [](In in) { return in[0].slice(-1, -5, -1); }, sliced(x, 1, 2, 6, 1)},
      {"bounds clamp", {x}, [](In in) { return in[0].slice(1, -100, 100, 4); }, sliced(x, 1, 0, 7, 4)},
      {"open bounds", {x3}, [](In in) { return in[0].slice(1, std::nullopt, std::nullopt, 2); }, sliced(x3, 1, 0, 5, 2)},
      {"middle dim of rank 3", {x3}, [](In in) { return in[0].slice(1, 2, 4); }, sliced(x3, 1, 2, 4, 1)},
      {"empty range", {x}, [](In in) { return in[0].slice(1, 5, 2); }, sliced(x, 1, 5, 5, 1)},
      {"i64, step 4", {xi}, [](In in) { return in[0].slice(0, 1, std::nullopt, 4); }, sliced(xi, 0, 1, 9, 4)},
      {"bool", {xb}, [](In in) { return in[0].slice(0, 1, 5, 2); }, sliced(xb, 0, 1, 5, 2)},
      {"size 0 dim kept", {random_ref({0, 4})}, [](In in) { return in[0].slice(1, 1, 3); }, Ref{{0, 2}, DType::f32, {}}},
      {"NaN passes", {special_ref()}, [](In in) { return in[0].slice(0, 0, 10, 3); }, sliced(special_ref(), 0, 0, 10, 3)},
  };
}

// ---- copying movement ops ----

/// Concatenation along `dim` of Refs of one rank, skipping shape [0], converted to `t`.
Ref concatenated(const std::vector<Ref>& parts, std::size_t dim, DType t) {
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

LT_OP_TEST(cat) {
  Ref a = random_ref({2, 3}, DType::f32, 141), b = random_ref({4, 3}, DType::f32, 142);
  Ref c = random_ref({2, 5}, DType::f32, 143);
  Ref ai = random_ref({2, 3}, DType::i64, 144, -9, 9), a32 = random_ref({1, 3}, DType::i32, 145, -9, 9);
  Ref ab = random_ref({3, 3}, DType::boolean, 146);
  Ref a64 = random_ref({2, 2}, DType::f64, 147);
  Ref r3a = random_ref({2, 1, 3}, DType::f32, 148), r3b = random_ref({2, 4, 3}, DType::f32, 149);
  Ref empty0 = Ref{{0}, DType::f32, {}};
  return {
      {"dim 0", {a, b}, [](In in) { return cat(in, 0); }, concatenated({a, b}, 0, DType::f32)},
      {"dim 1", {a, c}, [](In in) { return cat(in, 1); }, concatenated({a, c}, 1, DType::f32)},
      {"negative dim", {a, c, a}, [](In in) { return cat(in, -1); }, concatenated({a, c, a}, 1, DType::f32)},
      {"middle dim of rank 3", {r3a, r3b}, [](In in) { return cat(in, 1); }, concatenated({r3a, r3b}, 1, DType::f32)},
      {"single input", {b}, [](In in) { return cat(in, 0); }, b},
      {"five inputs", {a, b, a, b, a}, [](In in) { return cat(in, 0); }, concatenated({a, b, a, b, a}, 0, DType::f32)},
      {"f32 with i64 is f32", {a, ai}, [](In in) { return cat(in, 0); }, concatenated({a, ai}, 0, DType::f32)},
      {"i32 with i64 is i64", {a32, ai}, [](In in) { return cat(in, 0); }, concatenated({a32, ai}, 0, DType::i64)},
      {"bool with i32 is i32", {ab, a32}, [](In in) { return cat(in, 0); }, concatenated({ab, a32}, 0, DType::i32)},
      {"f32 with f64 is f64", {c, a64}, [](In in) { return cat(in, 1); }, concatenated({c, a64}, 1, DType::f64)},
      {"bool", {ab, ab}, [](In in) { return cat(in, 1); }, concatenated({ab, ab}, 1, DType::boolean)},
      {"size 0 along dim", {a, random_ref({0, 3})}, [](In in) { return cat(in, 0); }, a},
      {"size 0 elsewhere", {random_ref({0, 2}), random_ref({0, 3})}, [](In in) { return cat(in, 1); },
       Ref{{0, 5}, DType::f32, {}}},
      {"legacy [0] skipped", {empty0, a, empty0}, [](In in) { return cat(in, 1); },
       concatenated({empty0, a, empty0}, 1, DType::f32)},
      {"only [0] inputs", {empty0, empty0}, [](In in) { return cat(in, 0); }, empty0},
      {"NaN passes", {special_ref(), special_ref()}, [](In in) { return cat(in, 0); },
       concatenated({special_ref(), special_ref()}, 0, DType::f32)},
  };
}

/// Constant padding by index arithmetic: pads are (before, after) pairs from the last dim.
Ref padded(const Ref& x, const Idx& pads, double value) {
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

LT_OP_TEST(pad) {
  Ref x = random_ref({3, 4}, DType::f32, 151);
  Ref x3 = random_ref({2, 3, 2}, DType::f64, 152);
  Ref xi = random_ref({2, 3}, DType::i64, 153, -9, 9);
  Ref xb = random_ref({2, 2}, DType::boolean, 154);
  auto pad_by = [](Idx pads, double value) { return [pads, value](In in) { return pad(in[0], pads, value); }; };
  return {
      {"last dim", {x}, pad_by({1, 2}, 0), padded(x, {1, 2}, 0)},
      {"two dims with value", {x}, pad_by({2, 0, 1, 1}, -3.5), padded(x, {2, 0, 1, 1}, -3.5)},
      {"negative pads crop", {x}, pad_by({-1, -2, -1, 0}, 0), padded(x, {-1, -2, -1, 0}, 0)},
      {"crop and pad mixed", {x}, pad_by({-2, 3, 1, -1}, 7), padded(x, {-2, 3, 1, -1}, 7)},
      {"rank 3, all dims", {x3}, pad_by({1, 0, 0, 2, 1, 1}, 1.5), padded(x3, {1, 0, 0, 2, 1, 1}, 1.5)},
      {"no pads", {x3}, pad_by({}, 9), x3},
      {"i64 with value", {xi}, pad_by({0, 1, 1, 0}, 42), padded(xi, {0, 1, 1, 0}, 42)},
      {"bool with true", {xb}, pad_by({1, 1}, 1), padded(xb, {1, 1}, 1)},
      {"size 0 input", {random_ref({0, 2})}, pad_by({1, 1, 1, 0}, 2), padded(random_ref({0, 2}), {1, 1, 1, 0}, 2)},
      {"crop to size 0", {x}, pad_by({-2, -2}, 0), Ref{{3, 0}, DType::f32, {}}},
      {"NaN value and NaN input", {special_ref()}, pad_by({2, 1}, nan), padded(special_ref(), {2, 1}, nan)},
  };
}

Ref flipped(const Ref& x, const std::vector<std::size_t>& dims) {
  return build(x.shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    for (auto d : dims) i[d] = x.shape[d] - 1 - o[d];
    return at(x, i);
  });
}

LT_OP_TEST(flip) {
  Ref x = random_ref({3, 4}, DType::f32, 161);
  Ref x3 = random_ref({2, 3, 4}, DType::f32, 162);
  Ref xi = random_ref({5}, DType::i64, 163, -50, 50);
  Ref xb = random_ref({2, 3}, DType::boolean, 164);
  Ref s = scalar_ref(DType::f32, 3.0);
  return {
      {"dim 0", {x}, [](In in) { return in[0].flip({0}); }, flipped(x, {0})},
      {"last dim, negative", {x}, [](In in) { return in[0].flip({-1}); }, flipped(x, {1})},
      {"dims 0 and 2", {x3}, [](In in) { return in[0].flip({0, 2}); }, flipped(x3, {0, 2})},
      {"all dims", {x3}, [](In in) { return in[0].flip({2, 1, 0}); }, flipped(x3, {0, 1, 2})},
      {"no dims", {x}, [](In in) { return in[0].flip({}); }, x},
      {"i64", {xi}, [](In in) { return in[0].flip({0}); }, flipped(xi, {0})},
      {"bool", {xb}, [](In in) { return in[0].flip({1}); }, flipped(xb, {1})},
      {"rank 0", {s}, [](In in) { return in[0].flip({0}); }, s},
      {"size 0", {random_ref({0, 3})}, [](In in) { return in[0].flip({0, 1}); }, Ref{{0, 3}, DType::f32, {}}},
      {"NaN passes", {special_ref()}, [](In in) { return in[0].flip({0}); }, flipped(special_ref(), {0})},
  };
}

/// tril (lower) or triu of the last two dims.
Ref triangle(const Ref& x, std::int64_t diagonal, bool lower) {
  return build(x.shape, x.dtype, [&](const Idx& o) {
    std::int64_t i = o[o.size() - 2], j = o[o.size() - 1];
    bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
    return keep ? at(x, o) : 0.0;
  });
}

CaseList triangle_cases(bool lower) {
  Ref sq = random_ref({4, 4}, DType::f32, lower ? 171 : 181);
  Ref wide = random_ref({3, 5}, DType::f64, 172);
  Ref tall = random_ref({5, 2}, DType::f32, 173);
  Ref batch = random_ref({2, 3, 3, 4}, DType::f32, 174);
  Ref xi = random_ref({3, 3}, DType::i64, 175, -9, 9);
  Ref xb = random_ref({3, 4}, DType::boolean, 176);
  Ref nanm = with_shape(special_ref(), {2, 5});
  auto op = [lower](std::int64_t d) {
    return [lower, d](In in) { return lower ? in[0].tril(d) : in[0].triu(d); };
  };
  return {
      {"square", {sq}, op(0), triangle(sq, 0, lower)},
      {"diagonal 1", {sq}, op(1), triangle(sq, 1, lower)},
      {"diagonal -2", {sq}, op(-2), triangle(sq, -2, lower)},
      {"diagonal past the matrix", {sq}, op(9), triangle(sq, 9, lower)},
      {"diagonal before the matrix", {sq}, op(-9), triangle(sq, -9, lower)},
      {"wide", {wide}, op(1), triangle(wide, 1, lower)},
      {"tall", {tall}, op(-1), triangle(tall, -1, lower)},
      {"batch of rank 4", {batch}, op(0), triangle(batch, 0, lower)},
      {"i64", {xi}, op(0), triangle(xi, 0, lower)},
      {"bool", {xb}, op(1), triangle(xb, 1, lower)},
      {"size 0", {random_ref({2, 0, 3})}, op(0), Ref{{2, 0, 3}, DType::f32, {}}},
      {"NaN passes", {nanm}, op(0), triangle(nanm, 0, lower)},
  };
}

LT_OP_TEST(tril) { return triangle_cases(true); }
LT_OP_TEST(triu) { return triangle_cases(false); }

LT_OP_TEST(contiguous) {
  Ref x = random_ref({3, 4}, DType::f32, 191);
  Ref xi = random_ref({2, 3, 2}, DType::i64, 192, -9, 9);
  Ref xb = random_ref({4, 2}, DType::boolean, 193);
  Ref s = scalar_ref(DType::f64, 1.25);
  return {
      {"already contiguous", {x}, [](In in) { return in[0].contiguous(); }, x},
      {"of a transpose", {x}, [](In in) { return in[0].t().contiguous(); }, permuted(x, {1, 0})},
      {"of an expand", {with_shape(x, {1, 12})}, [](In in) { return in[0].expand({2, 12}).contiguous(); },
       expanded(with_shape(x, {1, 12}), {2, 12})},
      {"i64 permuted", {xi}, [](In in) { return in[0].permute({2, 0, 1}).contiguous(); }, permuted(xi, {2, 0, 1})},
      {"bool", {xb}, [](In in) { return in[0].contiguous(); }, xb},
      {"rank 0", {s}, [](In in) { return in[0].contiguous(); }, s},
      {"size 0", {random_ref({3, 0})}, [](In in) { return in[0].contiguous(); }, Ref{{3, 0}, DType::f32, {}}},
      {"NaN passes", {special_ref()}, [](In in) { return in[0].contiguous(); }, special_ref()},
  };
}

// ---- indexing ops ----

/// x's slices of `dim` at the positions in `index` (rank 0 or 1); a zero-dim x stays so.
Ref selected(const Ref& x, std::size_t dim, const Ref& index) {
  if (x.shape.empty()) return x;
  Idx shape = x.shape;
  shape[dim] = index.numel();
  return build(shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    i[dim] = static_cast<std::int64_t>(index.v[static_cast<std::size_t>(o[dim])]);
    return at(x, i);
  });
}

LT_OP_TEST(index_select) {
  Ref x = random_ref({5, 3}, DType::f32, 201);
  Ref x3 = random_ref({2, 4, 3}, DType::f64, 202);
  Ref xi = random_ref({6}, DType::i64, 203, -99, 99);
  Ref xb = random_ref({3, 4}, DType::boolean, 204);
  Ref rows = values_ref({4}, DType::i64, {4, 0, 4, 2});
  Ref cols32 = values_ref({5}, DType::i32, {2, 2, 0, 1, 0});
  Ref mid = index_ref({7}, 4, DType::i64, 205);
  Ref one = scalar_ref(DType::i64, 3);
  Ref none = Ref{{0}, DType::i64, {}};
  auto op = [](std::int64_t dim) { return [dim](In in) { return in[0].index_select(dim, in[1]); }; };
  return {
      {"rows with repeats", {x, rows}, op(0), selected(x, 0, rows)},
      {"i32 index, dim -1", {x, cols32}, op(-1), selected(x, 1, cols32)},
      {"middle dim of rank 3", {x3, mid}, op(1), selected(x3, 1, mid)},
      {"zero-dim index", {x, one}, op(0), selected(x, 0, with_shape(one, {1}))},
      {"empty index", {x, none}, op(1), Ref{{5, 0}, DType::f32, {}}},
      {"i64 values", {xi, rows}, op(0), selected(xi, 0, rows)},
      {"bool values", {xb, cols32}, op(0), selected(xb, 0, cols32)},
      {"zero-dim input", {scalar_ref(DType::f32, 6.5), scalar_ref(DType::i64, 0)}, op(0), scalar_ref(DType::f32, 6.5)},
      {"size 0 elsewhere", {random_ref({0, 3}), values_ref({2}, DType::i64, {1, 0})}, op(1), Ref{{0, 2}, DType::f32, {}}},
      {"NaN passes", {special_ref(), values_ref({4}, DType::i64, {0, 9, 0, 1})}, op(0),
       selected(special_ref(), 0, values_ref({4}, DType::i64, {0, 9, 0, 1}))},
  };
}

/// torch.gather: out[o] = x[o with o[dim] replaced by index[o]].
Ref gathered(const Ref& x, std::size_t dim, const Ref& index) {
  return build(index.shape, x.dtype, [&](const Idx& o) {
    Idx i = o;
    if (!i.empty()) i[dim] = static_cast<std::int64_t>(at(index, o));
    return at(x, i);
  });
}

LT_OP_TEST(gather) {
  Ref x = random_ref({3, 4}, DType::f32, 211);
  Ref x3 = random_ref({2, 5, 3}, DType::f64, 212);
  Ref xi = random_ref({7}, DType::i64, 213, -99, 99);
  Ref xb = random_ref({4, 3}, DType::boolean, 214);
  Ref i0 = index_ref({5, 4}, 3, DType::i64, 215);
  Ref i1 = index_ref({3, 6}, 4, DType::i32, 216);
  Ref small = index_ref({2, 2}, 4, DType::i64, 217);
  Ref i3 = index_ref({2, 3, 2}, 5, DType::i64, 218);
  Ref iv = index_ref({10}, 7, DType::i64, 219);
  Ref ib = index_ref({4, 3}, 4, DType::i32, 220);
  auto op = [](std::int64_t dim) { return [dim](In in) { return in[0].gather(dim, in[1]); }; };
  return {
      {"dim 0, repeats", {x, i0}, op(0), gathered(x, 0, i0)},
      {"dim 1, i32 index", {x, i1}, op(1), gathered(x, 1, i1)},
      {"index smaller than input", {x, small}, op(-1), gathered(x, 1, small)},
      {"rank 3, dim 1", {x3, i3}, op(-2), gathered(x3, 1, i3)},
      {"i64 rank 1", {xi, iv}, op(0), gathered(xi, 0, iv)},
      {"bool", {xb, ib}, op(0), gathered(xb, 0, ib)},
      {"empty index", {x, Ref{{0, 4}, DType::i64, {}}}, op(0), Ref{{0, 4}, DType::f32, {}}},
      {"zero-dim", {scalar_ref(DType::f32, -4.5), scalar_ref(DType::i64, 0)}, op(0), scalar_ref(DType::f32, -4.5)},
      {"NaN passes", {special_ref(), values_ref({5}, DType::i64, {0, 0, 9, 2, 1})}, op(0),
       gathered(special_ref(), 0, values_ref({5}, DType::i64, {0, 0, 9, 2, 1}))},
  };
}

/// self with src[e] added at self[e with e[dim] replaced by index[e]], in index order.
Ref scattered(const Ref& self, std::size_t dim, const Ref& index, const Ref& src) {
  Ref out = self;
  for (std::int64_t k = 0; k < index.numel(); ++k) {
    Idx e = unravel(k, index.shape);
    Idx o = e;
    if (!o.empty()) o[dim] = static_cast<std::int64_t>(at(index, e));
    double& target = out.v[static_cast<std::size_t>(ravel(o, out.shape))];
    target = round_to(self.dtype, self.dtype == DType::boolean ? (target != 0 || at(src, e) != 0) : target + at(src, e));
  }
  return out;
}

LT_OP_TEST(scatter_add) {
  Ref self = random_ref({3, 4}, DType::f32, 221);
  Ref src = random_ref({5, 4}, DType::f32, 222);
  Ref idx0 = index_ref({5, 4}, 3, DType::i64, 223);
  Ref idx1 = index_ref({3, 3}, 4, DType::i32, 224);
  Ref small = index_ref({2, 2}, 3, DType::i64, 225);
  Ref self3 = random_ref({2, 3, 4}, DType::f64, 226), src3 = random_ref({2, 3, 4}, DType::f64, 227);
  Ref idx3 = index_ref({2, 3, 4}, 3, DType::i64, 228);
  Ref selfi = random_ref({4}, DType::i64, 229, -9, 9), srci = random_ref({6}, DType::i64, 230, -9, 9);
  Ref idxi = values_ref({6}, DType::i64, {3, 3, 0, 3, 1, 0});
  Ref selfb = random_ref({2, 3}, DType::boolean, 231), srcb = random_ref({2, 3}, DType::boolean, 232);
  Ref idxb = index_ref({2, 3}, 2, DType::i64, 233);
  Ref nans = special_ref();
  Ref nidx = values_ref({10}, DType::i64, {1, 1, 2, 3, 3, 0, 0, 5, 9, 9});
  auto op = [](std::int64_t dim) { return [dim](In in) { return in[0].scatter_add(dim, in[1], in[2]); }; };
  return {
      {"dim 0, repeats", {self, idx0, src}, op(0), scattered(self, 0, idx0, src)},
      {"dim 1, i32 index", {self, idx1, src}, op(-1), scattered(self, 1, idx1, src)},
      {"index smaller than src", {self, small, src}, op(0), scattered(self, 0, small, src)},
      {"rank 3, dim 1", {self3, idx3, src3}, op(1), scattered(self3, 1, idx3, src3)},
      {"i64", {selfi, idxi, srci}, op(0), scattered(selfi, 0, idxi, srci)},
      {"bool", {selfb, idxb, srcb}, op(0), scattered(selfb, 0, idxb, srcb)},
      {"empty index", {self, Ref{{0, 4}, DType::i64, {}}, src}, op(0), self},
      {"zero-dim", {scalar_ref(DType::f32, 1.5), scalar_ref(DType::i64, 0), scalar_ref(DType::f32, 2.0)}, op(0),
       scalar_ref(DType::f32, 3.5)},
      {"NaN passes", {nans, nidx, random_ref({10}, DType::f32, 234)}, op(0),
       scattered(nans, 0, nidx, random_ref({10}, DType::f32, 234))},
  };
}

// ---- composites, on both devices ----

void expect_ref(const Tensor& got, const Ref& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.dtype(), want.dtype);
  ASSERT_EQ(got.sizes(), want.shape);
  std::vector<double> v = got.to_vector<double>();
  ASSERT_EQ(v.size(), want.v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (std::isnan(want.v[k])) EXPECT_TRUE(std::isnan(v[k])) << "element " << k;
    else EXPECT_EQ(v[k], want.v[k]) << "element " << k;
  }
}

class MovementComposite : public ::testing::TestWithParam<Device> {
 protected:
  Tensor on_device(const Ref& r) { return to_tensor(r).to(GetParam()); }
};

TEST_P(MovementComposite, SqueezeUnsqueezeFlatten) {
  Ref x = random_ref({2, 1, 3, 1}, DType::f32, 301);
  Tensor t = on_device(x);
  expect_ref(t.squeeze(), with_shape(x, {2, 3}), "squeeze()");
  expect_ref(t.squeeze(1), with_shape(x, {2, 3, 1}), "squeeze(1)");
  expect_ref(t.squeeze(-1), with_shape(x, {2, 1, 3}), "squeeze(-1)");
  expect_ref(t.squeeze(0), x, "squeeze of an extent other than 1 keeps it");
  expect_ref(t.unsqueeze(0), with_shape(x, {1, 2, 1, 3, 1}), "unsqueeze(0)");
  expect_ref(t.unsqueeze(-1), with_shape(x, {2, 1, 3, 1, 1}), "unsqueeze(-1)");
  expect_ref(t.unsqueeze(2), with_shape(x, {2, 1, 1, 3, 1}), "unsqueeze(2)");
  expect_ref(t.flatten(), with_shape(x, {6}), "flatten()");
  expect_ref(t.flatten(1, 2), with_shape(x, {2, 3, 1}), "flatten(1, 2)");
  expect_ref(t.flatten(-2), with_shape(x, {2, 1, 3}), "flatten(-2)");
  Ref s = scalar_ref(DType::i64, 7);
  expect_ref(on_device(s).flatten(), with_shape(s, {1}), "flatten of rank 0");
  expect_ref(on_device(s).unsqueeze(0), with_shape(s, {1}), "unsqueeze of rank 0");
  expect_ref(on_device(with_shape(s, {1, 1})).squeeze(), s, "squeeze to rank 0");
  expect_ref(on_device(random_ref({0, 1})).squeeze(), Ref{{0}, DType::f32, {}}, "squeeze keeps size 0");
}

TEST_P(MovementComposite, NarrowSelect) {
  Ref x = random_ref({4, 5}, DType::f64, 302);
  Tensor t = on_device(x);
  expect_ref(t.narrow(1, 1, 3), sliced(x, 1, 1, 4, 1), "narrow(1, 1, 3)");
  expect_ref(t.narrow(0, -2, 2), sliced(x, 0, 2, 4, 1), "negative start");
  expect_ref(t.narrow(-1, 5, 0), sliced(x, 1, 5, 5, 1), "empty at the end");
  auto row = [&](std::int64_t r) { return build({5}, x.dtype, [&](const Idx& o) { return at(x, {r, o[0]}); }); };
  auto col = [&](std::int64_t c) { return build({4}, x.dtype, [&](const Idx& o) { return at(x, {o[0], c}); }); };
  expect_ref(t.select(0, 2), row(2), "select(0, 2)");
  expect_ref(t.select(0, -1), row(3), "select(0, -1)");
  expect_ref(t.select(-1, 0), col(0), "select(-1, 0)");
  Ref v = random_ref({3}, DType::i64, 303, -9, 9);
  expect_ref(on_device(v).select(0, 1), scalar_ref(DType::i64, v.v[1]), "select to rank 0");
}

TEST_P(MovementComposite, StackSplitChunk) {
  Ref a = random_ref({2, 3}, DType::f32, 304), b = random_ref({2, 3}, DType::f32, 305);
  Tensor ta = on_device(a), tb = on_device(b);
  auto stacked = [&](std::size_t dim) {
    Idx shape = a.shape;
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(dim), 2);
    return build(shape, DType::f32, [&](const Idx& o) {
      Idx i = o;
      i.erase(i.begin() + static_cast<std::ptrdiff_t>(dim));
      return o[dim] == 0 ? at(a, i) : at(b, i);
    });
  };
  expect_ref(stack({ta, tb}, 0), stacked(0), "stack dim 0");
  expect_ref(stack({ta, tb}, 1), stacked(1), "stack dim 1");
  expect_ref(stack({ta, tb}, -1), stacked(2), "stack dim -1");
  Ref s = scalar_ref(DType::i64, 4);
  expect_ref(stack({on_device(s), on_device(s)}), Ref{{2}, DType::i64, {4, 4}}, "stack of rank 0");

  Ref x = random_ref({7, 2}, DType::i64, 306, -50, 50);
  Tensor t = on_device(x);
  auto expect_pieces = [&](const std::vector<Tensor>& got, const Idx& sizes, const std::string& what) {
    ASSERT_EQ(got.size(), sizes.size()) << what;
    std::int64_t start = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      expect_ref(got[k], sliced(x, 0, start, start + sizes[k], 1), what + " piece " + std::to_string(k));
      start += sizes[k];
    }
  };
  expect_pieces(t.split(3), {3, 3, 1}, "split(3)");
  expect_pieces(t.split(7), {7}, "split(7)");
  expect_pieces(t.split(10), {7}, "split(10)");
  expect_pieces(t.chunk(3), {3, 3, 1}, "chunk(3)");
  expect_pieces(t.chunk(4), {2, 2, 2, 1}, "chunk(4)");
  expect_pieces(t.chunk(6), {2, 2, 2, 1}, "chunk(6) gives fewer pieces");
  expect_pieces(t.chunk(7), {1, 1, 1, 1, 1, 1, 1}, "chunk(7)");
  std::vector<Tensor> cols = t.split(1, -1);
  ASSERT_EQ(cols.size(), 2u);
  expect_ref(cols[1], sliced(x, 1, 1, 2, 1), "split along dim -1");
  EXPECT_EQ(on_device(random_ref({0, 2})).chunk(3).size(), 3u) << "an empty dim gives `chunks` empty pieces";
  EXPECT_EQ(on_device(random_ref({0, 2})).split(2).size(), 1u);
}

TEST_P(MovementComposite, EmbeddingOneHot) {
  Ref w = random_ref({6, 3}, DType::f32, 307);
  Ref ids = values_ref({2, 3}, DType::i64, {5, 0, 2, 2, 5, 1});
  auto embedded = [&](const Ref& idx) {
    Idx shape = idx.shape;
    shape.push_back(3);
    return build(shape, DType::f32, [&](const Idx& o) {
      Idx e(o.begin(), o.end() - 1);
      return at(w, {static_cast<std::int64_t>(at(idx, e)), o.back()});
    });
  };
  expect_ref(embedding(on_device(w), on_device(ids)), embedded(ids), "embedding of [2, 3] indices");
  Ref ids32 = values_ref({4}, DType::i32, {1, 1, 0, 3});
  expect_ref(embedding(on_device(w), on_device(ids32)), embedded(ids32), "i32 indices");
  Ref one = scalar_ref(DType::i64, 4);
  expect_ref(embedding(on_device(w), on_device(one)), embedded(one), "zero-dim index");

  auto hot = [](const Ref& idx, std::int64_t classes) {
    Idx shape = idx.shape;
    shape.push_back(classes);
    return build(shape, DType::i64, [&](const Idx& o) {
      Idx e(o.begin(), o.end() - 1);
      return at(idx, e) == static_cast<double>(o.back()) ? 1.0 : 0.0;
    });
  };
  expect_ref(one_hot(on_device(ids), 7), hot(ids, 7), "one_hot with 7 classes");
  expect_ref(one_hot(on_device(ids32), 4), hot(ids32, 4), "one_hot of i32");
  expect_ref(one_hot(on_device(one), 5), hot(one, 5), "one_hot of rank 0");
  expect_ref(one_hot(on_device(Ref{{0}, DType::i64, {}}), 3), Ref{{0, 3}, DType::i64, {}}, "one_hot of size 0");
  if (!GetParam().is_lazy()) expect_ref(one_hot(on_device(ids)), hot(ids, 6), "one_hot infers max + 1");
}

TEST(MovementViews, CompositesOfStridedValuesAliasTheirInput) {
  Tensor x = to_tensor(random_ref({3, 1, 4}));
  Tensor t = x.permute({2, 1, 0});  // strides [1, 4, 4]
  auto shares = [&](const Tensor& y) { return y.impl().data.buffer.data() == x.impl().data.buffer.data(); };
  EXPECT_TRUE(shares(t.squeeze()));
  EXPECT_TRUE(shares(t.unsqueeze(1)));
  EXPECT_TRUE(shares(t.select(0, 2)));
  EXPECT_TRUE(shares(t.narrow(2, 1, 2)));
  EXPECT_TRUE(shares(t.flatten(1)));
  EXPECT_TRUE(shares(x.contiguous()));
  EXPECT_FALSE(shares(t.contiguous()));
  EXPECT_FALSE(shares(t.flatten()));
  EXPECT_FALSE(shares(x.flip({0})));
}

INSTANTIATE_TEST_SUITE_P(Devices, MovementComposite, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

// ---- errors ----

/// Runs f, which must raise lt::Error mentioning every one of `parts`.
void expect_error(const std::function<void()>& f, std::vector<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << parts[0];
  } catch (const Error& e) {
    std::string what = e.what();
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

class MovementErrors : public ::testing::TestWithParam<Device> {};

TEST_P(MovementErrors, NameTheOpAndOperandsAndRecordNothing) {
  Device dev = GetParam();
  auto f = [&](Idx shape, DType t = DType::f32) { return to_tensor(random_ref(shape, t, 9, 0, 1)).to(dev); };
  Tensor x = f({2, 3}), y = f({4, 4}), i = f({2}, DType::i64), fi = f({2}, DType::f32), s = f({});
  std::int64_t cat_runs = metrics::counter("lt::cat");

  expect_error([&] { cat({x, y}, 0); }, {"cat", "f32[2, 3]", "f32[4, 4]", "at position 1"});
  expect_error([&] { cat({x, f({2, 3, 1})}, 0); }, {"cat", "same rank"});
  expect_error([&] { cat({x, s}, 0); }, {"cat", "zero-dim"});
  expect_error([&] { cat({x, x}, 2); }, {"cat", "out of range"});
  expect_error([&] { cat({}, 0); }, {"cat", "non-empty"});
  expect_error([&] { stack({x, y}); }, {"stack", "f32[4, 4]"});
  expect_error([&] { pad(x, {1}); }, {"pad", "even", "f32[2, 3]"});
  expect_error([&] { pad(x, {0, 0, 0, 0, 1, 1}); }, {"pad", "3 dims for rank 2"});
  expect_error([&] { pad(x, {-2, -2}); }, {"pad", "negative size"});
  expect_error([&] { x.flip({0, -2}); }, {"flip", "more than once"});
  expect_error([&] { x.flip({2}); }, {"flip", "out of range"});
  expect_error([&] { x.index_select(0, fi); }, {"index_select", "i32 or i64", "f32[2]"});
  expect_error([&] { x.index_select(0, f({1, 1}, DType::i64)); }, {"index_select", "rank 0 or 1"});
  expect_error([&] { x.index_select(2, i); }, {"index_select", "out of range"});
  expect_error([&] { x.gather(0, i); }, {"gather", "rank", "i64[2]"});
  expect_error([&] { x.gather(1, f({3, 3}, DType::i64)); }, {"gather", "larger"});
  expect_error([&] { x.gather(0, f({2, 3}, DType::f64)); }, {"gather", "i32 or i64"});
  expect_error([&] { x.scatter_add(0, f({2, 3}, DType::i64), f({2, 3}, DType::f64)); }, {"scatter_add", "dtype", "f64[2, 3]"});
  expect_error([&] { x.scatter_add(0, f({3, 3}, DType::i64), x); }, {"scatter_add", "larger"});
  expect_error([&] { i.tril(); }, {"tril", "rank at least 2", "i64[2]"});
  expect_error([&] { i.triu(); }, {"triu", "rank at least 2"});
  expect_error([&] { x.squeeze(2); }, {"squeeze", "out of range"});
  expect_error([&] { x.unsqueeze(4); }, {"unsqueeze", "out of range"});
  expect_error([&] { f({1, 1, 1, 1, 1, 1, 1, 1}).unsqueeze(0); }, {"unsqueeze", "maximum rank"});
  expect_error([&] { f({2, 3, 4}).flatten(2, 1); }, {"flatten", "start_dim"});
  expect_error([&] { x.narrow(1, 2, 2); }, {"narrow", "exceeds", "f32[2, 3]"});
  expect_error([&] { x.narrow(1, -4, 1); }, {"narrow", "start -4"});
  expect_error([&] { x.select(0, 2); }, {"select", "index 2"});
  expect_error([&] { s.select(0, 0); }, {"select", "zero-dim"});
  expect_error([&] { x.split(0); }, {"split", "split_size 0"});
  expect_error([&] { x.chunk(0); }, {"chunk", "positive"});
  expect_error([&] { embedding(i, i); }, {"embedding", "rank 2"});
  expect_error([&] { embedding(x, fi); }, {"embedding", "i32 or i64"});
  expect_error([&] { one_hot(fi, 3); }, {"one_hot", "i32 or i64"});
  expect_error([&] { one_hot(i, 0); }, {"one_hot", "positive"});
  expect_error([&] { x.permute({0, 2}); }, {"permute", "out of range"});
  expect_error([&] { x.slice(0, 0, 1, 0); }, {"slice", "step"});
  if (dev.is_lazy()) {
    expect_error([&] { one_hot(i); }, {"one_hot", "num_classes must be given on a lazy device"});
    expect_error([&] { cat({x, to_tensor(random_ref({2, 3}))}, 0); }, {"cat", "different devices"});
    sync(dev);
  } else {
    expect_error([&] { one_hot(to_tensor(values_ref({2}, DType::i64, {1, -1})), 3); }, {"one_hot", "class value -1"});
    expect_error([&] { one_hot(to_tensor(Ref{{0}, DType::i64, {}})); }, {"one_hot", "empty"});
  }
  EXPECT_EQ(metrics::counter("lt::cat"), cat_runs) << "a failed call must record nothing";

  Ref a = random_ref({2, 3}, DType::f32, 9, 0, 1);
  expect_ref(cat({x, x}, 1), concatenated({a, a}, 1, DType::f32), "the next op still works");
}

INSTANTIATE_TEST_SUITE_P(Devices, MovementErrors, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

TEST(MovementRuntimeErrors, EagerIndexOutOfRangeThrowsAtTheCall) {
  Tensor x = to_tensor(random_ref({3, 4}));
  Tensor bad = to_tensor(values_ref({2, 2}, DType::i64, {0, 1, 2, 4}));
  expect_error([&] { x.gather(1, bad); }, {"gather", "index 4", "dim 1 of size 4"});
  expect_error([&] { x.gather(1, to_tensor(values_ref({1, 1}, DType::i32, {-1}))); }, {"gather", "index -1"});
  expect_error([&] { x.index_select(0, to_tensor(values_ref({3}, DType::i64, {0, 3, 1}))); },
               {"index_select", "index 3", "dim 0 of size 3"});
  expect_error([&] { x.scatter_add(0, to_tensor(values_ref({1, 2}, DType::i64, {1, 5})), x); },
               {"scatter_add", "index 5"});
  expect_error([&] { embedding(x, to_tensor(values_ref({1}, DType::i64, {3}))); }, {"index_select", "index 3"});
}

TEST(MovementRuntimeErrors, LazyGatherIndexErrorSurfacesAtTheBarrier) {
  Device dev = device();
  Ref xr = random_ref({3, 4}, DType::f32, 401);
  Tensor x = to_tensor(xr).to(dev);
  Tensor bad = to_tensor(values_ref({2, 2}, DType::i64, {0, 1, 9, 2})).to(dev);
  Tensor g = x.gather(1, bad) * 2.0;  // recording checks shapes only: the value is unknown
  expect_error(
      [&] {
        sync(dev);
        wait_device_ops();  // the step runs on the device's worker
      },
      {"gather", "index 9", "dim 1 of size 4"});
  expect_error([&] { g.to_vector<float>(); }, {"gather", "index 9"});

  // The device runs the next step.
  Ref good = values_ref({2, 2}, DType::i64, {3, 0, 1, 1});
  Tensor ok = x.gather(1, to_tensor(good).to(dev));
  sync(dev);
  expect_ref(ok, gathered(xr, 1, good), "the next step");
  expect_ref(x.index_select(0, to_tensor(values_ref({1}, DType::i64, {2})).to(dev)),
             selected(xr, 0, values_ref({1}, DType::i64, {2})), "a later read");
}

TEST(MovementRuntimeErrors, LazyScatterAddIndexErrorSurfacesAtRead) {
  Device dev = device();
  Tensor x = to_tensor(random_ref({2, 3})).to(dev);
  Tensor r = x.scatter_add(1, to_tensor(values_ref({2, 1}, DType::i32, {0, 3})).to(dev), x);
  expect_error([&] { r.to_vector<float>(); }, {"scatter_add", "index 3", "dim 1 of size 3"});
  expect_error([&] { one_hot(to_tensor(values_ref({2}, DType::i64, {0, 4})).to(dev), 3).to_vector<std::int64_t>(); },
               {"index 4"});
  Ref ones = Ref{{2, 3}, DType::f32, {1, 1, 1, 1, 1, 1}};
  expect_ref(x.scatter_add(0, to_tensor(Ref{{1, 3}, DType::i64, {1, 1, 1}}).to(dev), to_tensor(ones).to(dev)) * 0.0,
             Ref{{2, 3}, DType::f32, {0, 0, 0, 0, 0, 0}}, "the device still works");
}

TEST(MovementRuntimeErrors, LargeIndexErrorNamesTheFirstBadPosition) {
  // Bad values in different parallel blocks: the message must not depend on which ran first.
  std::vector<double> v(100000, 1.0);
  v[40000] = 7;
  v[90000] = 9;
  Tensor index = to_tensor(values_ref({100000}, DType::i64, v));
  Tensor x = to_tensor(random_ref({3, 2}));
  for (int run = 0; run < 3; ++run) expect_error([&] { x.index_select(0, index); }, {"index_select", "index 7"});
}

TEST(MovementRuntimeErrors, LargeScatterAddIsTheSameForAnyThreadCount) {
  // Enough lines to run in parallel, each with many duplicates: every sum must be the serial
  // one in index order, whatever thread ran its line.
  Ref self = Ref{{4, 20000}, DType::f32, std::vector<double>(80000, 0.0)};
  Ref src = random_ref({64, 20000}, DType::f32, 402, -1e3, 1e3);
  Ref idx = index_ref({64, 20000}, 4, DType::i64, 403);
  Tensor s = to_tensor(self), i = to_tensor(idx), x = to_tensor(src);
  std::vector<float> got = s.scatter_add(0, i, x).to_vector<float>();
  std::vector<float> serial;
  {
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
    serial = s.scatter_add(0, i, x).to_vector<float>();
  }
  ASSERT_EQ(got.size(), serial.size());
  EXPECT_EQ(std::memcmp(got.data(), serial.data(), got.size() * sizeof(float)), 0);
  for (std::size_t k = 0; k < got.size(); k += 997) {
    Idx o = unravel(static_cast<std::int64_t>(k), self.shape);
    float acc = 0;
    for (std::int64_t j = 0; j < 64; ++j)
      if (at(idx, {j, o[1]}) == static_cast<double>(o[0])) acc += static_cast<float>(at(src, {j, o[1]}));
    EXPECT_EQ(got[k], acc) << "element " << k;
  }
}

}  // namespace
}  // namespace lt::test
