// LibTorch's module API: calling a model runs its forward, zero_grad on modules and
// optimizers, MultiheadAttention's need_weights and average_attn_weights, the encoder
// layer's sequence-first default, and LibTorch's MNIST training loop written as its example.
#include <lazytensor/data.hpp>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

struct TwoLayers : nn::Callable<TwoLayers> {
  nn::Linear fc1{3, 4}, fc2{4, 2};
  TwoLayers() { LT_REGISTER_MODULES(fc1, fc2); }
  Tensor forward(Tensor x) { return fc2(relu(fc1(x))); }
};

struct ConstForward : nn::Callable<ConstForward> {
  nn::Linear fc{2, 2};
  ConstForward() { register_module("fc", fc); }
  Tensor forward(const Tensor& x) const { return fc(x); }
  /// A second signature: the call operator forwards any arguments.
  std::pair<Tensor, Tensor> forward(const Tensor& x, double scale) const { return {fc(x), Tensor(x * scale)}; }
};

TEST(NnApi, CallingAModuleRunsItsForward) {
  manual_seed(3);
  TwoLayers model;
  Tensor x = uniform_f64({5, 3}, 1).to(f32);
  EXPECT_EQ(model(x).to_vector<float>(), model.forward(x).to_vector<float>());
  EXPECT_EQ(model(x * 2).shape(), (Shape{5, 2}));  // an expression converts as forward's argument
  const ConstForward c;
  Tensor y = uniform_f64({1, 2}, 2).to(f32);
  EXPECT_EQ(c(y).to_vector<float>(), c.forward(y).to_vector<float>());
  auto [out, scaled] = c(y, 3.0);
  EXPECT_EQ(scaled.to_vector<float>(), Tensor(y * 3.0).to_vector<float>());
  static_assert(!std::is_invocable_v<const TwoLayers&, Tensor>, "TwoLayers::forward is not const");
  static_assert(std::is_invocable_v<TwoLayers&, Tensor>);
  // A user's module inside a Sequential, and layers, keep working.
  nn::Sequential seq(TwoLayers(), nn::ReLU(), nn::Linear(2, 1));
  EXPECT_EQ(seq(x).shape(), (Shape{5, 1}));
  EXPECT_EQ(model.named_parameters().size(), 4u);
}

TEST(NnApi, ZeroGradDropsOrZeroesEveryGradient) {
  manual_seed(4);
  TwoLayers model;
  Tensor x = uniform_f64({5, 3}, 5).to(f32);
  model(x).sum().backward();
  for (const Tensor& p : model.parameters()) ASSERT_TRUE(p.grad().defined());
  Tensor kept = model.fc1.weight.grad();  // a handle to the gradient itself
  model.zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : model.parameters()) {
    ASSERT_TRUE(p.grad().defined());
    for (float v : p.grad().to_vector<float>()) EXPECT_EQ(v, 0);
  }
  for (float v : kept.to_vector<float>()) EXPECT_EQ(v, 0);  // zeroed in place, as grad.zero_()
  model(x).sum().backward();
  model.zero_grad();  // PyTorch's default: set_to_none
  for (const Tensor& p : model.parameters()) EXPECT_FALSE(p.grad().defined());
  // The optimizer's zero_grad does the same to its parameters.
  optim::SGD opt(model.parameters(), {.lr = 0.1});
  model(x).sum().backward();
  opt.zero_grad(false);
  for (const Tensor& p : model.parameters()) EXPECT_EQ(p.grad().abs().sum().item<float>(), 0);
  opt.zero_grad();
  for (const Tensor& p : model.parameters()) EXPECT_FALSE(p.grad().defined());
  model.zero_grad();  // no gradients: nothing to do
}

TEST(NnApi, AttentionWithoutWeightsComputesNoWeights) {
  manual_seed(6);
  nn::MultiheadAttention mha(4, 2);
  Tensor q = uniform_f64({3, 2, 4}, 7).to(f32), kv = uniform_f64({5, 2, 4}, 8).to(f32);
  // Eager: the head average (a mean) runs only when the weights are asked for.
  metrics::reset();
  auto [out, weights] = mha(q, kv, kv, {}, /*need_weights=*/false);
  EXPECT_FALSE(weights.defined());
  EXPECT_EQ(metrics::counter("lt::mean"), 0);
  auto [out_w, weights_w] = mha(q, kv, kv);
  EXPECT_EQ(metrics::counter("lt::mean"), 1);
  EXPECT_EQ(weights_w.shape(), (Shape{2, 3, 5}));
  // Without weights the output is one fused attention op, with them the composite form: the
  // same values up to rounding.
  const std::vector<float> a = out.to_vector<float>(), b = out_w.to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f) << i;
  // Lazy: the step without weights records fewer nodes, and no mean.
  mha.to(device());
  Tensor lq = q.to(device()), lkv = kv.to(device());
  auto [lazy_out, none] = mha(lq, lkv, lkv, {}, false);
  auto [lazy_out_w, lazy_w] = mha(lq, lkv, lkv, {}, true);
  const std::string without = debug::ir_text({lazy_out}), with = debug::ir_text({lazy_out_w, lazy_w});
  EXPECT_EQ(without.find("mean"), std::string::npos) << without;
  EXPECT_NE(with.find("mean"), std::string::npos) << with;
  EXPECT_FALSE(none.defined());
  sync();
  EXPECT_EQ(lazy_out.to_vector<float>(), out.to_vector<float>());
}

TEST(NnApi, AttentionWeightsPerHead) {
  manual_seed(9);
  nn::MultiheadAttention mha(6, 3, {.batch_first = true});
  Tensor q = uniform_f64({2, 4, 6}, 10), kv = uniform_f64({2, 5, 6}, 11);
  mha.to(f64);
  auto [out, per_head] = mha(q, kv, kv, {}, true, {}, /*average_attn_weights=*/false);
  auto [out_avg, averaged] = mha(q, kv, kv);
  ASSERT_EQ(per_head.shape(), (Shape{2, 3, 4, 5}));
  std::vector<double> heads = values(per_head), avg = values(averaged);
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 4; ++l) {
      for (int s = 0; s < 5; ++s) {
        double sum = 0;
        for (int h = 0; h < 3; ++h) sum += heads[static_cast<std::size_t>(((n * 3 + h) * 4 + l) * 5 + s)];
        EXPECT_NEAR(avg[static_cast<std::size_t>((n * 4 + l) * 5 + s)], sum / 3, 1e-12);
      }
      for (int h = 0; h < 3; ++h) {  // each head's row is a distribution over the keys
        double row = 0;
        for (int s = 0; s < 5; ++s) row += heads[static_cast<std::size_t>(((n * 3 + h) * 4 + l) * 5 + s)];
        EXPECT_NEAR(row, 1, 1e-12);
      }
    }
  // Unbatched: [H, L, S].
  auto [u, uw] = mha(q.select(0, 1), kv.select(0, 1), kv.select(0, 1), {}, true, {}, false);
  EXPECT_EQ(uw.shape(), (Shape{3, 4, 5}));
}

TEST(NnApi, EncoderLayerIsSequenceFirstByDefault) {
  EXPECT_FALSE(nn::TransformerEncoderLayerOptions{}.batch_first);
  EXPECT_FALSE(nn::MultiheadAttentionOptions{}.batch_first);
  manual_seed(12);
  nn::TransformerEncoderLayer seq_first(4, 2, {.dim_feedforward = 8, .dropout = 0.0});
  nn::TransformerEncoderLayer batch_first(4, 2, {.dim_feedforward = 8, .dropout = 0.0, .batch_first = true});
  batch_first.load_state_dict(seq_first.state_dict());
  Tensor x = uniform_f64({5, 3, 4}, 13).to(f32);  // [S, N, E]
  Tensor a = seq_first(x), b = batch_first(x.transpose(0, 1)).transpose(0, 1);
  EXPECT_EQ(a.shape(), (Shape{5, 3, 4}));
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (std::size_t i = 0; i < av.size(); ++i) EXPECT_NEAR(av[i], bv[i], 1e-5) << i;
}

// LibTorch's examples/cpp/mnist, with the seed's network and fake data.
struct Net : nn::Callable<Net> {
  Net() {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor forward(Tensor x) {
    x = bn1(relu(max_pool2d(conv1(x), 2)));
    x = bn2(relu(max_pool2d(conv2(x), 2)));
    x = x.view({-1, 320});
    x = relu(fc1(x));
    x = fc2(x);
    return log_softmax(x, /*dim=*/1);
  }
  nn::Conv2d conv1{1, 10, /*kernel_size=*/5}, conv2{10, 20, 5};
  nn::BatchNorm2d bn1{10}, bn2{20};
  nn::Linear fc1{320, 50}, fc2{50, 10};
};

template <class DataLoader>
std::vector<float> train(Net& model, Device device, DataLoader& data_loader, optim::Optimizer& optimizer) {
  model.train();
  std::vector<float> losses;
  for (auto [data, targets] : data_loader) {
    data = data.to(device), targets = targets.to(device);
    optimizer.zero_grad();
    auto output = model(data);
    auto loss = nn::functional::nll_loss(output, targets);
    EXPECT_FALSE(std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    losses.push_back(loss.template item<float>());
  }
  return losses;
}

TEST(NnApi, LibTorchMnistLoopLearns) {
  manual_seed(1);
  Device device = lt::device();
  Net model;
  model.to(device);
  optim::SGD optimizer(model.parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.5});
  auto data_loader = data::fake_data({16, 1, 28, 28}, 10, /*count=*/8, /*seed=*/2);
  std::vector<float> losses = train(model, device, data_loader, optimizer);
  ASSERT_EQ(losses.size(), 8u);
  EXPECT_LT(losses.back(), losses.front());
  EXPECT_LT(losses[6] + losses[7], losses[0] + losses[1]);
}

}  // namespace
}  // namespace lt::test
