// Reference cases of the movement and indexing ops. Expected values come from index
// arithmetic over the input Refs (movement_refs.hpp), never from the library.
#include <gtest/gtest.h>

#include <optional>

#include "movement_refs.hpp"

namespace lt::test {
namespace {

using namespace movement;
using In = const std::vector<Tensor>&;

// ---- view ops ----

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

}  // namespace
}  // namespace lt::test
