// Tests of the composite movement functions on both devices, and of the movement and
// indexing ops' error paths. Expected values come from index arithmetic over the input
// Refs (movement_refs.hpp), never from the library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "movement_refs.hpp"

namespace lt::test {
namespace {

using namespace movement;

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
