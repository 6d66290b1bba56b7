// Collectives over 1 to 4 replicas in one process against a plain-loop reference: every op,
// every dtype it takes, sizes that do not split evenly, on the lazy and the eager device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

/// The reference reduction of the replicas' element i, in ordinal order and in dtype `t`.
double reduce_reference(ReduceOp op, DType t, int replicas, std::int64_t i) {
  auto in = [&](int r) { return from_vector(std::vector<double>{replica_value(r, i)}).to(t).item<double>(); };
  double acc = in(0);
  for (int r = 1; r < replicas; ++r) {
    const double x = in(r);
    if (op == ReduceOp::max) acc = std::max(acc, x);
    else if (op == ReduceOp::min) acc = std::min(acc, x);
    else acc = t == DType::f32 ? static_cast<double>(static_cast<float>(acc) + static_cast<float>(x)) : acc + x;
  }
  if (op == ReduceOp::mean) acc = t == DType::f32 ? static_cast<double>(static_cast<float>(acc) * (1.0f / static_cast<float>(replicas))) : acc * (1.0 / replicas);
  return acc;
}

struct Case {
  int replicas;
  DType dtype;
  Device (*device)();
};

// Tests copy a case's fields into variables, not a structured binding: the launched lambdas
// capture them, which clang before 16 refuses for bindings.
class Collectives : public ::testing::TestWithParam<Case> {};

Device lazy_device() { return device(); }
Device eager_device() { return cpu; }

TEST_P(Collectives, AllReduceMatchesPlainLoop) {
  const Case& param = GetParam();
  const int replicas = param.replicas;
  const DType dtype = param.dtype;
  Device (*const where)() = param.device;
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min}) {
    if (op == ReduceOp::mean && !is_floating(dtype)) continue;
    for (std::int64_t n : {1, 7, 1000, 70001}) {
      PerReplica got(replicas);
      launch([&](int ordinal) {
        Tensor out = all_reduce(op, replica_input(ordinal, Shape{n}, dtype, where()));
        if (out.device().is_lazy()) sync();
        EXPECT_EQ(out.dtype(), dtype);
        got.set(ordinal, out.to_vector<double>());
      }, {.replicas = replicas});
      for (int r = 0; r < replicas; ++r) {
        ASSERT_EQ(got.values[r].size(), static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(got.values[r][i], reduce_reference(op, dtype, replicas, i))
              << reduce_op_name(op) << " n=" << n << " replica " << r << " element " << i;
      }
    }
  }
}

TEST_P(Collectives, AllGatherConcatenatesInOrdinalOrder) {
  const Case& param = GetParam();
  const int replicas = param.replicas;
  const DType dtype = param.dtype;
  Device (*const where)() = param.device;
  for (int dim : {0, 1, 2}) {
    const Shape shape{2, 3, 5};
    PerReplica got(replicas);
    launch([&](int ordinal) { got.set(ordinal, all_gather(replica_input(ordinal, shape, dtype, where()), dim).to_vector<double>()); },
           {.replicas = replicas});
    // Reference: out[a][b][c] along `dim` takes replica (index / extent) at index % extent.
    Shape out_shape = shape;
    out_shape[dim] *= replicas;
    std::vector<double> want;
    for (std::int64_t a = 0; a < out_shape[0]; ++a)
      for (std::int64_t b = 0; b < out_shape[1]; ++b)
        for (std::int64_t c = 0; c < out_shape[2]; ++c) {
          std::int64_t idx[3] = {a, b, c};
          const int r = static_cast<int>(idx[dim] / shape[dim]);
          idx[dim] %= shape[dim];
          want.push_back(from_vector(std::vector<double>{replica_value(r, (idx[0] * 3 + idx[1]) * 5 + idx[2])}).to(dtype).item<double>());
        }
    for (int r = 0; r < replicas; ++r) EXPECT_EQ(got.values[r], want) << "dim " << dim << " replica " << r;
  }
}

TEST_P(Collectives, ReduceScatterGivesEachReplicaItsShard) {
  const Case& param = GetParam();
  const int replicas = param.replicas;
  const DType dtype = param.dtype;
  Device (*const where)() = param.device;
  for (int dim : {0, 1}) {
    Shape shape{3, 4};
    shape[dim] = 2 * replicas;
    PerReplica got(replicas);
    launch([&](int ordinal) {
      got.set(ordinal, reduce_scatter(ReduceOp::sum, replica_input(ordinal, shape, dtype, where()), dim).to_vector<double>());
    }, {.replicas = replicas});
    for (int r = 0; r < replicas; ++r) {
      std::vector<double> want;
      for (std::int64_t a = 0; a < (dim == 0 ? 2 : shape[0]); ++a)
        for (std::int64_t b = 0; b < (dim == 1 ? 2 : shape[1]); ++b) {
          const std::int64_t row = dim == 0 ? a + 2 * r : a, col = dim == 1 ? b + 2 * r : b;
          want.push_back(reduce_reference(ReduceOp::sum, dtype, replicas, row * shape[1] + col));
        }
      EXPECT_EQ(got.values[r], want) << "dim " << dim << " replica " << r;
    }
  }
}

TEST_P(Collectives, BroadcastGivesEveryReplicaTheRootsValue) {
  const Case& param = GetParam();
  const int replicas = param.replicas;
  const DType dtype = param.dtype;
  Device (*const where)() = param.device;
  const int root = replicas - 1;
  PerReplica got(replicas);
  launch([&](int ordinal) { got.set(ordinal, broadcast(replica_input(ordinal, Shape{3, 7}, dtype, where()), root).to_vector<double>()); },
         {.replicas = replicas});
  const std::vector<double> want = replica_input(root, Shape{3, 7}, dtype, cpu).to_vector<double>();
  for (int r = 0; r < replicas; ++r) EXPECT_EQ(got.values[r], want) << "replica " << r;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int r : {1, 2, 3, 4})
    for (DType t : {DType::f32, DType::f64, DType::i32, DType::i64}) out.push_back({r, t, &lazy_device});
  for (int r : {2, 3}) out.push_back({r, DType::f32, &eager_device});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::to_string(c.replicas) + "_replicas_" + std::string(name(c.dtype)) + (c.device == &lazy_device ? "_lazy" : "_cpu");
}

INSTANTIATE_TEST_SUITE_P(InProcess, Collectives, ::testing::ValuesIn(cases()), case_name);

TEST(Collectives, ListAllReduceBucketsAndKeepsShapes) {
  PerReplica got(3);
  launch([&](int ordinal) {
    std::vector<Tensor> ts{replica_input(ordinal, Shape{2, 3}, DType::f32, device()),
                           replica_input(ordinal, Shape{5}, DType::f32, device()),
                           replica_input(ordinal, Shape{4}, DType::i64, device())};
    all_reduce(ReduceOp::sum, ts);
    sync();
    EXPECT_EQ(ts[0].sizes(), (std::vector<std::int64_t>{2, 3}));
    std::vector<double> all;
    for (const Tensor& t : ts)
      for (double v : t.to_vector<double>()) all.push_back(v);
    got.set(ordinal, all);
  }, {.replicas = 3});
  std::vector<double> want;
  for (std::int64_t i = 0; i < 6; ++i) want.push_back(reduce_reference(ReduceOp::sum, DType::f32, 3, i));
  for (std::int64_t i = 0; i < 5; ++i) want.push_back(reduce_reference(ReduceOp::sum, DType::f32, 3, i));
  for (std::int64_t i = 0; i < 4; ++i) want.push_back(reduce_reference(ReduceOp::sum, DType::i64, 3, i));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(got.values[r], want);
}

TEST(Collectives, GatherAndBroadcastMoveBooleans) {
  PerReplica gathered(3), broadcast_values(3);
  launch([&](int ordinal) {
    Tensor flags = from_vector(std::vector<float>{0, 1, static_cast<float>(ordinal % 2)}).to(DType::boolean).to(device());
    gathered.set(ordinal, all_gather(flags).to_vector<double>());
    broadcast_values.set(ordinal, broadcast(flags, 1).to_vector<double>());
  }, {.replicas = 3});
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(gathered.values[r], (std::vector<double>{0, 1, 0, 0, 1, 1, 0, 1, 0}));
    EXPECT_EQ(broadcast_values.values[r], (std::vector<double>{0, 1, 1}));
  }
}

TEST(Collectives, MeshReduceAndQueries) {
  std::vector<int> worlds(4), locals(4);
  std::vector<double> sums(4);
  launch([&](int ordinal) {
    EXPECT_EQ(ordinal, lt::ordinal());
    EXPECT_EQ(device(), lazy(local_ordinal()));
    EXPECT_EQ(is_master_ordinal(), ordinal == 0);
    worlds[ordinal] = world_size();
    locals[ordinal] = local_ordinal();
    rendezvous("start");
    sums[ordinal] = mesh_reduce("sum", ordinal + 0.5, [](std::vector<double> v) {
      double s = 0;
      for (double x : v) s += x;
      return s;
    });
  }, {.replicas = 4});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(worlds[r], 4);
    EXPECT_EQ(locals[r], r);
    EXPECT_EQ(sums[r], 8.0);
  }
  EXPECT_EQ(world_size(), 1);  // outside a launch again
}

}  // namespace
}  // namespace lt::test
