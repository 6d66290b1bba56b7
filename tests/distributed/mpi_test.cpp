// Run under mpirun -np 2: every process launches two replicas, so the world has four. The
// collectives and a training step must give what they give in one process, and the same bits
// on every replica of every process.
#include <gtest/gtest.h>

#include <cstdlib>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

constexpr int replicas_per_process = 2;

int processes() {
  const char* v = std::getenv("OMPI_COMM_WORLD_SIZE");
  return v != nullptr ? std::atoi(v) : 1;
}

TEST(AcrossProcesses, WorldSpansEveryProcess) {
  const int world = processes() * replicas_per_process;
  launch([&](int ordinal) {
    EXPECT_EQ(world_size(), world);
    EXPECT_EQ(lt::ordinal(), ordinal);
    EXPECT_EQ(ordinal % replicas_per_process, local_ordinal());
    const int sum = mesh_reduce("ordinals", ordinal, [](std::vector<int> v) {
      int s = 0;
      for (std::size_t k = 0; k < v.size(); ++k) {
        EXPECT_EQ(v[k], static_cast<int>(k));  // ordinal order
        s += v[k];
      }
      return s;
    });
    EXPECT_EQ(sum, world * (world - 1) / 2);
  }, {.replicas = replicas_per_process});
}

TEST(AcrossProcesses, CollectivesMatchPlainLoops) {
  const int world = processes() * replicas_per_process;
  launch([&](int ordinal) {
    for (DType t : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      const std::int64_t n = 1001;
      Tensor x = replica_input(ordinal, Shape{n}, t, device());
      std::vector<double> sum = all_reduce(ReduceOp::sum, x).to_vector<double>();
      std::vector<double> max = all_reduce(ReduceOp::max, x).to_vector<double>();
      for (std::int64_t i = 0; i < n; ++i) {
        double s = 0, m = -1e300;
        for (int r = 0; r < world; ++r) {
          const double v = replica_input(r, Shape{n}, t, cpu).to_vector<double>()[static_cast<std::size_t>(i)];
          s += v;  // small integers and quarters: exact in every order
          m = std::max(m, v);
        }
        ASSERT_EQ(sum[static_cast<std::size_t>(i)], s) << name(t) << " element " << i;
        ASSERT_EQ(max[static_cast<std::size_t>(i)], m) << name(t) << " element " << i;
      }
    }
    // all_gather along dim 1 and reduce_scatter along dim 0, against the one-process layout.
    Tensor g = all_gather(replica_input(ordinal, Shape{2, 3}, DType::f32, device()), 1);
    EXPECT_EQ(g.sizes(), (std::vector<std::int64_t>{2, 3 * world}));
    std::vector<double> gv = g.to_vector<double>();
    for (int r = 0; r < world; ++r) {
      std::vector<double> src = replica_input(r, Shape{2, 3}, DType::f32, cpu).to_vector<double>();
      for (int a = 0; a < 2; ++a)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(gv[static_cast<std::size_t>(a * 3 * world + r * 3 + c)], src[static_cast<std::size_t>(a * 3 + c)]);
    }
    Tensor s = reduce_scatter(ReduceOp::sum, replica_input(ordinal, Shape{world * 2, 3}, DType::f64, device()), 0);
    std::vector<double> sv = s.to_vector<double>();
    ASSERT_EQ(sv.size(), 6u);
    for (int k = 0; k < 6; ++k) {
      double want = 0;
      for (int r = 0; r < world; ++r)
        want += replica_input(r, Shape{world * 2, 3}, DType::f64, cpu).to_vector<double>()[static_cast<std::size_t>(ordinal * 6 + k)];
      EXPECT_EQ(sv[static_cast<std::size_t>(k)], want);
    }
    Tensor b = broadcast(replica_input(ordinal, Shape{4}, DType::i64, device()), world - 1);
    EXPECT_EQ(b.to_vector<double>(), replica_input(world - 1, Shape{4}, DType::i64, cpu).to_vector<double>());
  }, {.replicas = replicas_per_process});
}

struct Mlp : nn::Module {
  nn::Linear fc1{4, 8}, fc2{8, 2};
  Mlp() { LT_REGISTER_MODULES(fc1, fc2); }
  Tensor forward(const Tensor& x) { return fc2(tanh(fc1(x))); }
};

TEST(AcrossProcesses, TrainingKeepsEveryReplicaBitwiseEqual) {
  launch([&](int ordinal) {
    manual_seed(100 + static_cast<std::uint64_t>(ordinal));  // different starts: the broadcast aligns them
    Mlp model;
    model.to(device());
    broadcast_master_param(model);
    optim::Adam opt(model.parameters(), {.lr = 0.01});
    for (int step = 0; step < 5; ++step) {
      Tensor x = replica_input(ordinal + step, Shape{3, 4}, DType::f32, device()) * 0.1;
      opt.zero_grad();
      nn::functional::mse_loss(model.forward(x), zeros({3, 2}, device())).backward();
      optimizer_step(opt, true);
    }
    std::vector<double> flat;
    for (const Tensor& p : model.parameters())
      for (double v : p.to_vector<double>()) flat.push_back(v);
    // Every replica compares its parameters with replica 0's, sent to all.
    Tensor mine = from_vector(flat, Shape{static_cast<std::int64_t>(flat.size())});
    std::vector<double> master = broadcast(mine, 0).to_vector<double>();
    EXPECT_EQ(flat, master) << "replica " << ordinal;
  }, {.replicas = replicas_per_process});
}

}  // namespace
}  // namespace lt::test
