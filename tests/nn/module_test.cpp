// Module: registration and names, parameters(), state_dict() and load_state_dict() with their
// errors, to(device) and to(dtype), tied weights, train() and eval().
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

struct TwoLayer : nn::Module {
  nn::Linear fc1{3, 4}, fc2{4, 2};
  nn::BatchNorm1d bn{4};
  TwoLayer() { LT_REGISTER_MODULES(fc1, bn, fc2); }
  Tensor forward(const Tensor& x) { return fc2(relu(bn(fc1(x)))); }
};

/// An encoder and a decoder whose weights may be one tensor (tied).
struct Tied : nn::Module {
  nn::Embedding embed{5, 3};
  nn::Linear out{3, 5, {.bias = false}};
  Tied() { LT_REGISTER_MODULES(embed, out); }
  void tie() { out.weight = embed.weight; }
};

std::vector<std::string> names(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (auto& [n, t] : named) out.push_back(n);
  return out;
}

TEST(NnModule, NamesParametersAndBuffersByMember) {
  TwoLayer m;
  EXPECT_EQ(names(m.named_parameters()),
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(names(m.named_buffers()),
            (std::vector<std::string>{"bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  for (const Tensor& p : m.parameters()) EXPECT_TRUE(p.requires_grad() && p.is_leaf());
  EXPECT_EQ(m.state_dict().size(), 9u);

  struct Positional : nn::Module {
    nn::ReLU a;
    nn::Linear b{2, 2};
    Positional() { register_modules(a, b); }
  } p;
  EXPECT_EQ(names(p.named_parameters()), (std::vector<std::string>{"1.weight", "1.bias"}));
}

TEST(NnModule, RegistryFollowsCopiesAndMoves) {
  TwoLayer a;
  TwoLayer b = a;  // shares the tensors, names its own members
  EXPECT_EQ(b.parameters()[0].impl_ptr(), a.fc1.weight.impl_ptr());
  b.fc1.weight = zeros({4, 3}).requires_grad_();
  EXPECT_EQ(b.parameters()[0].impl_ptr(), b.fc1.weight.impl_ptr());
  EXPECT_NE(a.parameters()[0].impl_ptr(), b.parameters()[0].impl_ptr());
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 1));
  auto moved = std::move(seq);
  EXPECT_EQ(names(moved.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(moved.parameters()[2].impl_ptr(), moved.get<2>().weight.impl_ptr());
  EXPECT_EQ(moved(ones({5, 2})).sizes(), (std::vector<std::int64_t>{5, 1}));
}

TEST(NnModule, RejectsBadNames) {
  struct Bad : nn::Module {
    Tensor a = zeros({1}), b = zeros({1});
    void add(const char* name, Tensor& t) { register_buffer(name, t); }
  } m;
  m.add("a", m.a);
  EXPECT_THROW(m.add("a", m.b), Error);
  EXPECT_THROW(m.add("x.y", m.b), Error);
  EXPECT_THROW(m.add("", m.b), Error);
}

TEST(NnModule, StateDictRoundTrip) {
  manual_seed(1);
  TwoLayer a;
  manual_seed(2);
  TwoLayer b;
  Tensor x = uniform_f64({5, 3}, 3).to(f32);
  a.eval(), b.eval();
  EXPECT_NE(values(a.forward(x)), values(b.forward(x)));
  b.to(device());
  b.load_state_dict(a.state_dict());
  EXPECT_EQ(b.fc1.weight.device(), device());  // loaded values take the module's device
  EXPECT_EQ(values(a.forward(x)), values(b.forward(x.to(device()))));
  EXPECT_TRUE(b.fc1.weight.requires_grad() && b.fc1.weight.is_leaf());
}

TEST(NnModule, LoadStateDictNamesEveryBadKeyAndChangesNothing) {
  TwoLayer m;
  std::vector<double> before = values(m.fc1.weight);
  nn::StateDict good = TwoLayer().state_dict();

  nn::StateDict missing = good;
  missing.erase("fc2.bias");
  missing["fc1.weight"] = ones({4, 3});
  try {
    m.load_state_dict(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing keys: fc2.bias"), std::string::npos) << e.what();
  }
  EXPECT_EQ(values(m.fc1.weight), before);

  nn::StateDict extra = good;
  extra["fc3.weight"] = ones({1});
  extra["fc1.weight"] = ones({4, 3});
  try {
    m.load_state_dict(extra);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unexpected keys: fc3.weight"), std::string::npos) << e.what();
  }
  EXPECT_EQ(values(m.fc1.weight), before);

  nn::StateDict shaped = good;
  shaped["fc1.weight"] = ones({4, 3});
  shaped["fc2.weight"] = ones({2, 5});
  try {
    m.load_state_dict(shaped);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fc2.weight (the module has [2, 4], the dict [2, 5])"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(values(m.fc1.weight), before);
}

TEST(NnModule, ToMovesEveryHandleInPlace) {
  TwoLayer m;
  Tensor handle = m.fc1.weight;
  std::vector<Tensor> params = m.parameters();
  m.to(device());
  EXPECT_EQ(handle.device(), device());
  for (const Tensor& p : params) EXPECT_EQ(p.device(), device());
  for (const Tensor& b : m.buffers()) EXPECT_EQ(b.device(), device());
  EXPECT_TRUE(handle.requires_grad());
  m.to(f64);
  EXPECT_EQ(m.fc1.weight.dtype(), f64);
  EXPECT_EQ(m.bn.num_batches_tracked.dtype(), i64);  // integers keep their dtype
  m.to(cpu);
  EXPECT_EQ(handle.device(), cpu);
  EXPECT_EQ(handle.dtype(), f64);
}

void expect_tied(Tied& m) {
  EXPECT_EQ(m.embed.weight.impl_ptr(), m.out.weight.impl_ptr());
  EXPECT_EQ(m.parameters().size(), 1u);  // a tied tensor is one parameter
  EXPECT_EQ(m.state_dict().size(), 2u);  // under each of its names
  EXPECT_EQ(m.embed.weight.device(), m.out.weight.device());
}

TEST(NnModule, TiedWeightsStayTiedAcrossTo) {
  Tied before;
  before.tie();
  before.to(device());
  expect_tied(before);

  Tied after;
  after.to(device());
  after.tie();
  expect_tied(after);

  // A training step updates the one tensor through both uses.
  lt::optim::SGD opt(before.parameters(), {.lr = 0.5});
  Tensor ids = from_vector(std::vector<std::int64_t>{1, 3}, {2}, device());
  Tensor loss = before.out(before.embed(ids)).sum();
  loss.backward();
  opt.step();
  sync();
  expect_tied(before);
  before.to(cpu);
  expect_tied(before);
  before.load_state_dict(before.state_dict());
  expect_tied(before);
}

TEST(NnModule, TrainAndEvalSwitchBatchNormAndDropout) {
  TwoLayer m;
  m.eval();
  EXPECT_FALSE(m.is_training() || m.bn.is_training() || m.fc1.is_training());
  m.train();
  EXPECT_TRUE(m.bn.is_training());

  nn::BatchNorm2d bn(2);
  Tensor x = Tensor(uniform_f64({4, 2, 3, 3}, 5).to(f32) * 3.0 + 1.0);
  Tensor y = bn(x);
  std::vector<double> mean = values(x.mean({0, 2, 3})), var = values(x.var({0, 2, 3}, 1));
  std::vector<double> rm = values(bn.running_mean), rv = values(bn.running_var);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(rm[c], 0.1 * mean[c], 1e-5);
    EXPECT_NEAR(rv[c], 0.9 + 0.1 * var[c], 1e-5);
  }
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 1);
  // Training mode normalises with the batch's statistics.
  expect_values_near(y.mean({0, 2, 3}), {0, 0}, 1e-5);
  bn.eval();
  Tensor z = bn(x);
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 1);  // eval leaves the statistics alone
  EXPECT_EQ(values(bn.running_mean), rm);
  std::vector<double> xv = values(x), zv = values(z);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    std::size_t c = (i / 9) % 2;
    EXPECT_NEAR(zv[i], (xv[i] - rm[c]) / std::sqrt(rv[c] + 1e-5), 1e-4);
  }

  nn::Dropout drop(0.5);
  Tensor ones_in = ones({1000});
  std::vector<double> dropped = values(drop(ones_in));
  std::size_t zeros_seen = 0;
  for (double v : dropped) {
    EXPECT_TRUE(v == 0.0 || v == 2.0);
    zeros_seen += v == 0.0;
  }
  EXPECT_GT(zeros_seen, 400u);
  EXPECT_LT(zeros_seen, 600u);
  drop.eval();
  EXPECT_EQ(values(drop(ones_in)), values(ones_in));
}

TEST(NnModule, LayersRejectBadInput) {
  EXPECT_THROW(nn::Linear(0, 3), Error);
  EXPECT_THROW(nn::Conv2d(3, 4, 3, {.groups = 2}), Error);
  EXPECT_THROW(nn::Dropout(1.5), Error);
  EXPECT_THROW(nn::MultiheadAttention(6, 4), Error);
  EXPECT_THROW(nn::GELU("fast"), Error);
  nn::BatchNorm2d bn(3);
  EXPECT_THROW(bn(zeros({2, 4, 3, 3})), Error);  // 4 channels, not 3
  EXPECT_THROW(bn(zeros({2, 3, 3})), Error);     // rank 3
  nn::Linear fc(3, 2);
  EXPECT_THROW(fc(zeros({2, 4})), Error);
  nn::Embedding emb(4, 2);
  EXPECT_THROW(emb(from_vector(std::vector<std::int64_t>{4}, {1})), Error);
}

}  // namespace
}  // namespace lt::test
