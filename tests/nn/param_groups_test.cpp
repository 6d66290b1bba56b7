// AdamW over param groups with their own weight decay and rate, against a plain loop; their
// state in PyTorch's layout; and the checks on groups.
#include <cmath>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

constexpr int steps = 5;

double grad_at(int s, std::size_t i) { return std::cos(0.3 * static_cast<double>(i) + s) - 0.05 * s; }

/// AdamW on one group's values by a loop (PyTorch's rule).
std::vector<double> adamw_loop(std::vector<double> p, std::size_t offset, double lr, double wd, int n_steps,
                               double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
  std::vector<double> m(p.size()), v(p.size());
  for (int s = 0; s < n_steps; ++s)
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * wd;
      double g = grad_at(s, offset + i);
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double mhat = m[i] / (1 - std::pow(b1, s + 1)), vhat = v[i] / (1 - std::pow(b2, s + 1));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  return p;
}

struct Model {
  Tensor weight, bias, norm;
  explicit Model(Device dev)
      : weight(from_vector(std::vector<double>{1, -2, 3, 0.5}, {2, 2}, dev).requires_grad_()),
        bias(from_vector(std::vector<double>{0.25, -0.75}, {2}, dev).requires_grad_()),
        norm(from_vector(std::vector<double>{1.5}, {1}, dev).requires_grad_()) {}
  /// Sets step s's gradients: element i of the parameters laid end to end gets grad_at(s, i).
  void set_grads(int s) {
    std::size_t offset = 0;
    for (Tensor* t : {&weight, &bias, &norm}) {
      std::vector<double> g(static_cast<std::size_t>(t->numel()));
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = grad_at(s, offset + i);
      offset += g.size();
      t->mutable_grad() = from_vector(g, t->shape(), t->device());
    }
  }
};

void expect_near(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << "element " << i;
}

TEST(NnParamGroups, AdamWDecaysOnlyTheGroupsThatAskForIt) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    Model m(dev);
    // Decay on the weight only; the biases and norms in a group without decay, at their own rate.
    optim::AdamW opt({{.params = {m.weight}}, {.params = {m.bias, m.norm}, .lr = 0.02, .weight_decay = 0.0}},
                     {.lr = 0.05, .weight_decay = 0.1});
    ASSERT_EQ(opt.num_param_groups(), 2u);
    EXPECT_EQ(opt.group_of(0), 0u);
    EXPECT_EQ(opt.group_of(2), 1u);
    EXPECT_EQ(opt.group_options(1).weight_decay, 0.0);
    EXPECT_EQ(opt.options.weight_decay, 0.1);
    for (int s = 0; s < steps; ++s) {
      opt.zero_grad();
      m.set_grads(s);
      opt.step();
      if (dev.is_lazy()) sync(dev);
    }
    expect_near(values(m.weight), adamw_loop({1, -2, 3, 0.5}, 0, 0.05, 0.1, steps));
    expect_near(values(m.bias), adamw_loop({0.25, -0.75}, 4, 0.02, 0.0, steps));
    expect_near(values(m.norm), adamw_loop({1.5}, 6, 0.02, 0.0, steps));
  }
}

TEST(NnParamGroups, StateHasEachGroupAndRoundTrips) {
  Model a(cpu);
  optim::AdamW opt({{.params = {a.weight, a.bias}}, {.params = {a.norm}, .beta2 = 0.99, .weight_decay = 0.0}},
                   {.lr = 0.05, .weight_decay = 0.1});
  for (int s = 0; s < 2; ++s) {
    opt.zero_grad();
    a.set_grads(s);
    opt.step();
  }
  opt.set_lr(1, 0.01);
  optim::OptimizerState state = opt.state_dict();
  ASSERT_EQ(state.param_groups.size(), 2u);
  EXPECT_EQ(state.param_groups[0].params, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(state.param_groups[1].params, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(std::get<double>(state.param_groups[0].options.at("weight_decay")), 0.1);
  EXPECT_EQ(std::get<double>(state.param_groups[1].options.at("weight_decay")), 0.0);
  EXPECT_EQ(std::get<double>(state.param_groups[1].options.at("lr")), 0.01);
  EXPECT_EQ(std::get<std::vector<double>>(state.param_groups[1].options.at("betas")), (std::vector<double>{0.9, 0.99}));

  // A fresh optimizer of the same layout continues as the first one does.
  Model b(cpu);
  {
    no_grad guard;
    for (auto [from, to] : {std::pair{&a.weight, &b.weight}, std::pair{&a.bias, &b.bias}, std::pair{&a.norm, &b.norm}})
      to->assign(from->detach());
  }
  optim::AdamW other({{.params = {b.weight, b.bias}}, {.params = {b.norm}}}, {.lr = 1.0});
  other.load_state_dict(state);
  EXPECT_EQ(other.lr(1), 0.01);
  EXPECT_EQ(other.group_options(1).beta2, 0.99);
  a.set_grads(2);
  b.set_grads(2);
  opt.step();
  other.step();
  expect_near(values(b.weight), values(a.weight));
  expect_near(values(b.norm), values(a.norm));

  // A state of another layout is refused and changes nothing.
  optim::AdamW one_group({b.weight, b.bias, b.norm}, {.lr = 0.3});
  EXPECT_THROW(one_group.load_state_dict(state), Error);
  EXPECT_EQ(one_group.lr(), 0.3);
  optim::OptimizerState moved = state;
  std::swap(moved.param_groups[0].params[1], moved.param_groups[1].params[0]);
  EXPECT_THROW(other.load_state_dict(moved), Error);
  optim::OptimizerState bad = state;
  bad.param_groups[1].options["weight_decay"] = -1.0;
  EXPECT_THROW(other.load_state_dict(bad), Error);
  EXPECT_EQ(other.group_options(1).weight_decay, 0.0);
}

TEST(NnParamGroups, RejectsBadGroups) {
  Model m(cpu);
  EXPECT_THROW(optim::AdamW({{.params = {m.weight}}, {.params = {m.bias, m.weight}}}), Error);  // twice
  EXPECT_THROW(optim::AdamW({{.params = {m.weight}}, {.params = {m.bias}, .lr = -1.0}}), Error);
  EXPECT_THROW(optim::AdamW({{.params = {m.weight}}, {.params = {m.bias}, .beta1 = 1.0}}), Error);
  EXPECT_THROW(optim::AdamW(std::vector<optim::AdamParamGroup>{}), Error);
  EXPECT_THROW(optim::AdamW(std::vector<optim::AdamParamGroup>{{.params = {Tensor(m.weight * 2)}}}), Error);  // not a leaf
  optim::AdamW ok({{.params = {m.weight}}, {.params = {m.bias}}});
  EXPECT_THROW(ok.group_options(2), Error);
  EXPECT_THROW((void)ok.lr(2), Error);
}

}  // namespace
}  // namespace lt::test
