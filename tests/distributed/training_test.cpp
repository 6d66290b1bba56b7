// Data-parallel training over replicas of one process: every replica ends each step with the
// same bits, R replicas on B/R examples each follow one replica on B, a replicated step
// compiles once per process, and the sampler shares a dataset out as PyTorch's does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <lazytensor/runtime/barrier.hpp>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

struct Mlp : nn::Module {
  nn::Linear fc1{6, 16}, fc2{16, 3};
  Mlp() { LT_REGISTER_MODULES(fc1, fc2); }
  Tensor forward(const Tensor& x) { return fc2(relu(fc1(x))); }
};

/// Examples [begin, end) of a fixed regression set.
std::pair<Tensor, Tensor> examples(std::int64_t begin, std::int64_t end, std::int64_t step) {
  std::vector<float> x, y;
  for (std::int64_t i = begin; i < end; ++i)
    for (int k = 0; k < 6; ++k) x.push_back(static_cast<float>(std::sin(0.37 * static_cast<double>(i * 6 + k + step * 11))));
  for (std::int64_t i = begin; i < end; ++i)
    for (int k = 0; k < 3; ++k) y.push_back(static_cast<float>(std::cos(0.21 * static_cast<double>(i * 3 + k + step * 5))));
  return {from_vector(x, Shape{end - begin, 6}), from_vector(y, Shape{end - begin, 3})};
}

/// Trains `replicas` replicas for `steps` steps on a global batch of `batch` (each replica its
/// contiguous share); returns each replica's flattened parameters.
std::vector<std::vector<double>> train(int replicas, std::int64_t batch, int steps, bool adam) {
  PerReplica params(replicas);
  manual_seed(7);
  launch([&](int ordinal) {
    Mlp model;
    model.to(device());
    broadcast_master_param(model);
    std::unique_ptr<optim::Optimizer> opt;
    if (adam) opt = std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{.lr = 0.01});
    else opt = std::make_unique<optim::SGD>(model.parameters(), optim::SGDOptions{.lr = 0.05, .momentum = 0.9});
    const std::int64_t share = batch / replicas;
    for (int s = 0; s < steps; ++s) {
      auto [x, y] = examples(ordinal * share, (ordinal + 1) * share, s);
      opt->zero_grad();
      Tensor loss = nn::functional::mse_loss(model.forward(x.to(device())), y.to(device()));
      loss.backward();
      optimizer_step(*opt, true);
    }
    std::vector<double> flat;
    for (const Tensor& p : model.parameters())
      for (double v : p.to_vector<double>()) flat.push_back(v);
    params.set(ordinal, flat);
  }, {.replicas = replicas});
  return params.values;
}

TEST(DataParallel, ReplicasHoldBitwiseEqualParametersAfterTwentySteps) {
  for (int replicas : {2, 3})
    for (bool adam : {false, true}) {
      auto params = train(replicas, 12, 20, adam);
      for (int r = 1; r < replicas; ++r)
        EXPECT_EQ(params[r], params[0]) << replicas << " replicas, " << (adam ? "Adam" : "SGD") << ", replica " << r;
    }
}

TEST(DataParallel, TwoReplicasOnHalfBatchesFollowOneReplicaOnTheWholeBatch) {
  // The mean of the two halves' mean gradients is the whole batch's mean gradient: equal up to
  // rounding, which 10 steps of SGD keep below 1e-5 here.
  auto one = train(1, 16, 10, false), two = train(2, 16, 10, false);
  ASSERT_EQ(one[0].size(), two[0].size());
  for (std::size_t k = 0; k < one[0].size(); ++k) EXPECT_NEAR(two[0][k], one[0][k], 1e-5) << "parameter element " << k;
}

TEST(DataParallel, AReplicatedStepCompilesOncePerProcess) {
  // A graph shape no other test uses, so that nothing is cached before.
  auto compiles = [](int replicas) {
    plan_cache().clear();
    wait_device_ops();
    const std::int64_t before = metrics::counter("UncachedCompile");
    launch([&](int ordinal) {
      for (int s = 0; s < 3; ++s) {
        Tensor x = replica_input(ordinal, Shape{5, 9}, DType::f32, device());
        Tensor y = all_reduce(ReduceOp::sum, Tensor((x * 2.0).exp()).sum(1));
        sync();
        (void)y.to_vector<float>();
      }
    }, {.replicas = replicas});
    return metrics::counter("UncachedCompile") - before;
  };
  const std::int64_t one = compiles(1);
  EXPECT_GE(one, 1);
  EXPECT_EQ(compiles(4), one);
}

TEST(DistributedSampler, SharesOutDisjointPaddedIndices) {
  for (bool shuffle : {false, true})
    for (bool drop_last : {false, true}) {
      const std::int64_t n = 10;
      const int replicas = 3;
      std::multiset<std::int64_t> seen;
      std::size_t per = 0;
      for (int r = 0; r < replicas; ++r) {
        data::DistributedSampler s(n, {.num_replicas = replicas, .rank = r, .shuffle = shuffle, .seed = 5, .drop_last = drop_last});
        s.set_epoch(2);
        std::vector<std::int64_t> mine = s.indices();
        EXPECT_EQ(static_cast<std::int64_t>(mine.size()), s.size());
        per = mine.size();
        seen.insert(mine.begin(), mine.end());
      }
      // PyTorch's split: 4 each, padded with the order's first two (12 in all), or 3 each.
      EXPECT_EQ(per, drop_last ? 3u : 4u);
      std::set<std::int64_t> distinct(seen.begin(), seen.end());
      EXPECT_EQ(distinct.size(), drop_last ? 9u : 10u);
      EXPECT_EQ(seen.size(), per * replicas);
    }
  // Every epoch reshuffles; the same epoch gives the same order.
  data::DistributedSampler a(100, {.num_replicas = 2, .rank = 0, .seed = 1});
  EXPECT_EQ(a.indices(0), a.indices(0));
  EXPECT_NE(a.indices(0), a.indices(1));
  EXPECT_THROW(data::DistributedSampler(10, {.num_replicas = 2, .rank = 2}), Error);
}

TEST(DistributedSampler, DefaultsToTheReplicaAndFeedsALoader) {
  std::vector<std::vector<std::int64_t>> labels(2);
  launch([&](int ordinal) {
    data::DistributedSampler sampler(8, {.shuffle = false});
    EXPECT_EQ(sampler.options().num_replicas, 2);
    EXPECT_EQ(sampler.options().rank, ordinal);
    std::vector<float> y(8);
    for (int i = 0; i < 8; ++i) y[static_cast<std::size_t>(i)] = static_cast<float>(i);
    data::TensorDataset dataset(from_vector(y, Shape{8, 1}), from_vector(y, Shape{8}));
    data::DataLoader loader(dataset, {.batch_size = 2, .sampler = sampler});
    EXPECT_EQ(loader.size(), 2);
    for (auto [x, t] : loader)
      for (float v : t.to_vector<float>()) labels[static_cast<std::size_t>(ordinal)].push_back(static_cast<std::int64_t>(v));
  }, {.replicas = 2});
  EXPECT_EQ(labels[0], (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(labels[1], (std::vector<std::int64_t>{1, 3, 5, 7}));
}

}  // namespace
}  // namespace lt::test
