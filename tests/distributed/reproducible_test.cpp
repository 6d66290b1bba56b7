// The reproducible mode: an MLP without batch statistics, trained on one global batch split
// into contiguous shares, ends with bitwise the same parameters for 1, 2 and 4 replicas.
#include <gtest/gtest.h>

#include <cmath>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

struct Mlp : nn::Module {
  nn::Linear fc1{8, 16}, fc2{16, 4};
  Mlp() { LT_REGISTER_MODULES(fc1, fc2); }
  Tensor forward(const Tensor& x) { return fc2(relu(fc1(x))); }
};

constexpr std::int64_t global_batch = 16;

/// Example i of step `step`: inputs, a regression target and a class.
Tensor inputs(std::int64_t begin, std::int64_t end, int step) {
  std::vector<float> v;
  for (std::int64_t i = begin; i < end; ++i)
    for (int k = 0; k < 8; ++k) v.push_back(static_cast<float>(std::sin(0.3 * static_cast<double>(i * 8 + k) + step)));
  return from_vector(v, Shape{end - begin, 8});
}
Tensor classes(std::int64_t begin, std::int64_t end, int step) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = begin; i < end; ++i) v.push_back((i * 3 + step) % 4);
  return from_vector(v, Shape{end - begin});
}

std::vector<double> train(int replicas, bool cross_entropy, bool adam) {
  PerReplica params(replicas);
  manual_seed(11);
  launch([&](int ordinal) {
    Mlp model;
    model.to(device());
    std::unique_ptr<optim::Optimizer> opt;
    if (adam) opt = std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{.lr = 0.01});
    else opt = std::make_unique<optim::SGD>(model.parameters(), optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
    const std::int64_t share = global_batch / replicas, begin = ordinal * share, end = begin + share;
    for (int step = 0; step < 10; ++step) {
      opt->zero_grad();
      Tensor out = model.forward(inputs(begin, end, step).to(device()));
      Tensor loss = cross_entropy ? nn::functional::cross_entropy(out, classes(begin, end, step).to(device()))
                                  : nn::functional::mse_loss(out, full({end - begin, 4}, 0.5, device()));
      loss.backward();
      optimizer_step(*opt, true);
    }
    std::vector<double> flat;
    for (const Tensor& p : model.parameters())
      for (double v : p.to_vector<double>()) flat.push_back(v);
    params.set(ordinal, flat);
  }, {.replicas = replicas, .reproducible = true});
  for (int r = 1; r < replicas; ++r) EXPECT_EQ(params.values[r], params.values[0]);
  return params.values[0];
}

TEST(ReproducibleMode, OneTwoAndFourReplicasEndBitwiseEqual) {
  for (bool cross_entropy : {false, true})
    for (bool adam : {false, true}) {
      const std::vector<double> one = train(1, cross_entropy, adam);
      ASSERT_FALSE(one.empty());
      for (int replicas : {2, 4}) {
        const std::vector<double> many = train(replicas, cross_entropy, adam);
        ASSERT_EQ(many.size(), one.size());
        std::size_t differ = 0;
        for (std::size_t k = 0; k < one.size(); ++k) differ += many[k] != one[k];
        EXPECT_EQ(differ, 0u) << replicas << " replicas, " << (cross_entropy ? "cross_entropy" : "mse") << ", "
                              << (adam ? "Adam" : "SGD") << ": " << differ << " of " << one.size() << " parameters differ";
      }
    }
}

TEST(ReproducibleMode, TreeProductsMatchThePlainProduct) {
  // The traced tree is a product all the same: against the plain one within rounding.
  Tensor a = randn({5, 7}), b = randn({7, 3});
  std::vector<float> plain = matmul(a, b).to_vector<float>();
  std::vector<float> tree;
  launch([&](int) { tree = matmul(a.to(device()), b.to(device())).to_vector<float>(); }, {.replicas = 1, .reproducible = true});
  ASSERT_EQ(tree.size(), plain.size());
  for (std::size_t k = 0; k < plain.size(); ++k) EXPECT_NEAR(tree[k], plain[k], 1e-5) << k;
}

}  // namespace
}  // namespace lt::test
