// Every module's gradients, for its parameters and its floating inputs, against central finite
// differences in f64 on the eager device. The loss is sum(out * w) for fixed random weights w.
#include <functional>
#include <string>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

struct ModuleCase {
  std::string label;
  std::function<std::shared_ptr<nn::Module>()> make;
  std::vector<Tensor> inputs;  // differentiated, except those in `fixed`
  std::size_t fixed_from;      // inputs from this position on are fixed (indices, masks)
  // The module's output for the inputs; reseeds first, so random modules repeat their draws.
  std::function<Tensor(nn::Module&, const std::vector<Tensor>&)> forward;
};

template <class M>
ModuleCase module_case(std::string label, std::function<M()> make, std::vector<Tensor> inputs,
                       std::function<Tensor(M&, const std::vector<Tensor>&)> forward = {},
                       std::vector<Tensor> fixed = {}) {
  if constexpr (std::is_invocable_v<M&, const Tensor&>)
    if (!forward) forward = [](M& m, const std::vector<Tensor>& in) { return Tensor(m(in[0])); };
  std::size_t fixed_from = is_floating(inputs[0].dtype()) ? inputs.size() : 0;
  inputs.insert(inputs.end(), fixed.begin(), fixed.end());
  return {std::move(label), [make] { return std::make_shared<M>(make()); }, std::move(inputs), fixed_from,
          [forward](nn::Module& m, const std::vector<Tensor>& in) {
            manual_seed(1234);
            return forward(static_cast<M&>(m), in);
          }};
}

Tensor indices(std::vector<std::int64_t> v, Shape shape) { return from_vector(v, shape); }

std::vector<ModuleCase> module_cases() {
  using namespace nn;
  std::vector<ModuleCase> c;
  c.push_back(module_case<Linear>("Linear", [] { return Linear(3, 2); }, {uniform_f64({4, 3}, 1)}));
  c.push_back(module_case<Linear>("Linear without bias, 3-d input", [] { return Linear(3, 2, {.bias = false}); },
                                  {uniform_f64({2, 2, 3}, 2)}));
  c.push_back(module_case<Conv2d>("Conv2d", [] { return Conv2d(2, 3, 3); }, {uniform_f64({2, 2, 5, 5}, 3)}));
  c.push_back(module_case<Conv2d>("Conv2d stride, padding, groups",
                                  [] { return Conv2d(4, 2, {3, 2}, {.stride = 2, .padding = {1, 0}, .groups = 2}); },
                                  {uniform_f64({1, 4, 5, 4}, 4)}));
  c.push_back(module_case<Conv2d>("Conv2d unbatched, dilation", [] { return Conv2d(1, 2, 2, {.dilation = 2}); },
                                  {uniform_f64({1, 5, 5}, 5)}));
  c.push_back(module_case<BatchNorm1d>("BatchNorm1d [N, C]", [] { return BatchNorm1d(3); }, {uniform_f64({5, 3}, 6)}));
  c.push_back(module_case<BatchNorm1d>("BatchNorm1d [N, C, L]", [] { return BatchNorm1d(2); }, {uniform_f64({3, 2, 4}, 7)}));
  c.push_back(module_case<BatchNorm2d>("BatchNorm2d", [] { return BatchNorm2d(2); }, {uniform_f64({2, 2, 3, 3}, 8)}));
  c.push_back(module_case<BatchNorm2d>("BatchNorm2d eval",
                                       [] {
                                         BatchNorm2d bn(2);
                                         bn.eval();
                                         return bn;
                                       },
                                       {uniform_f64({2, 2, 2, 2}, 9)}));
  c.push_back(module_case<LayerNorm>("LayerNorm", [] { return LayerNorm(Shape{2, 3}); }, {uniform_f64({2, 2, 3}, 10)}));
  c.push_back(module_case<Embedding>("Embedding", [] { return Embedding(5, 3); }, {indices({4, 0, 4, 2}, {2, 2})}));
  c.push_back(module_case<Dropout>("Dropout", [] { return Dropout(0.3); }, {uniform_f64({4, 5}, 11)}));
  c.push_back(module_case<MaxPool2d>("MaxPool2d", [] { return MaxPool2d(2); }, {uniform_f64({1, 2, 4, 4}, 12)}));
  c.push_back(module_case<MaxPool2d>("MaxPool2d stride 1, padding",
                                     [] { return MaxPool2d(3, {.stride = Pair2(1), .padding = 1}); },
                                     {uniform_f64({1, 1, 4, 4}, 13)}));
  c.push_back(module_case<AvgPool2d>("AvgPool2d", [] { return AvgPool2d(2, {.stride = Pair2(1)}); },
                                     {uniform_f64({2, 1, 3, 3}, 14)}));
  c.push_back(module_case<ReLU>("ReLU", [] { return ReLU(); }, {uniform_f64({3, 4}, 15)}));
  c.push_back(module_case<GELU>("GELU", [] { return GELU(); }, {uniform_f64({3, 4}, 16)}));
  c.push_back(module_case<GELU>("GELU tanh", [] { return GELU("tanh"); }, {uniform_f64({3, 4}, 17)}));
  c.push_back(module_case<Tanh>("Tanh", [] { return Tanh(); }, {uniform_f64({3, 4}, 18)}));
  c.push_back(module_case<Sigmoid>("Sigmoid", [] { return Sigmoid(); }, {uniform_f64({3, 4}, 19)}));
  c.push_back(module_case<Flatten>("Flatten", [] { return Flatten(); }, {uniform_f64({2, 2, 3}, 20)}));
  using Mlp = Sequential<Linear, Tanh, Linear>;
  c.push_back(module_case<Mlp>("Sequential", [] { return Mlp(Linear(3, 4), Tanh(), Linear(4, 2)); }, {uniform_f64({2, 3}, 21)}));
  c.push_back(module_case<MultiheadAttention>(
      "MultiheadAttention batch_first, masks", [] { return MultiheadAttention(4, 2, {.batch_first = true}); },
      {uniform_f64({2, 3, 4}, 22), uniform_f64({2, 2, 4}, 23)},
      [](MultiheadAttention& m, const std::vector<Tensor>& in) { return m(in[0], in[1], in[1], in[2], true, in[3]).first; },
      {Tensor(from_vector(std::vector<std::int64_t>{0, 1, 0, 0}, {2, 2}) != 0),
       from_vector(std::vector<double>{0, -1, 0.5, 0, 0, 0}, {3, 2})}));
  c.push_back(module_case<MultiheadAttention>(
      "MultiheadAttention sequence first, weights", [] { return MultiheadAttention(4, 2); },
      {uniform_f64({3, 2, 4}, 24)},
      [](MultiheadAttention& m, const std::vector<Tensor>& in) {
        auto [out, weights] = m(in[0], in[0], in[0]);
        return Tensor(out.sum(2) + weights.sum(2).transpose(0, 1));
      }));
  c.push_back(module_case<TransformerEncoderLayer>(
      "TransformerEncoderLayer sequence first", [] { return TransformerEncoderLayer(4, 2, {.dim_feedforward = 6, .dropout = 0.0}); },
      {uniform_f64({2, 3, 4}, 25)}));
  c.push_back(module_case<TransformerEncoderLayer>(
      "TransformerEncoderLayer batch_first, norm_first, gelu, dropout",
      [] {
        return TransformerEncoderLayer(
            4, 2, {.dim_feedforward = 6, .dropout = 0.2, .activation = "gelu", .batch_first = true, .norm_first = true});
      },
      {uniform_f64({1, 3, 4}, 26)}));
  return c;
}

double loss_of(const ModuleCase& c, nn::Module& m, const std::vector<Tensor>& inputs, const Tensor& w) {
  no_grad guard;
  return Tensor((c.forward(m, inputs) * w).sum()).item<double>();
}

Tensor nudged(const Tensor& t, std::size_t i, double delta) {
  std::vector<double> v = values(t);
  v[i] += delta;
  return from_vector(v, t.shape(), t.device());
}

void check(const ModuleCase& c) {
  SCOPED_TRACE(c.label);
  std::shared_ptr<nn::Module> m = c.make();
  m->to(f64);
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < c.inputs.size(); ++k)
    inputs.push_back(k < c.fixed_from ? c.inputs[k].detach().requires_grad_() : c.inputs[k]);
  Tensor out = c.forward(*m, inputs);
  Tensor w = uniform_f64(out.shape(), 99);
  Tensor((out * w).sum()).backward();

  const double eps = 1e-6;
  std::size_t compared = 0;
  auto compare = [&](const std::string& what, const Tensor& analytic, const std::function<void(const Tensor&)>& set,
                     const Tensor& base) {
    ASSERT_TRUE(analytic.defined()) << what << " has no gradient";
    std::vector<double> a = values(analytic);
    for (std::size_t i = 0; i < a.size(); ++i) {
      set(nudged(base, i, eps));
      double plus = loss_of(c, *m, inputs, w);
      set(nudged(base, i, -eps));
      double minus = loss_of(c, *m, inputs, w);
      set(base);
      double numeric = (plus - minus) / (2 * eps);
      EXPECT_NEAR(a[i], numeric, 1e-6 + 1e-5 * std::abs(numeric)) << what << ", element " << i;
      ++compared;
    }
  };
  for (auto& [name, p] : m->named_parameters()) {
    Tensor base = p.detach().to(cpu);
    Tensor param = p;
    compare(name, p.grad(), [&](const Tensor& v) { no_grad g; param.assign(v); }, base);
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].requires_grad()) continue;
    Tensor base = inputs[k].detach();
    Tensor analytic = inputs[k].grad();
    compare("input " + std::to_string(k), analytic, [&](const Tensor& v) { inputs[k] = v; }, base);
  }
  std::size_t expected = 0;
  for (const Tensor& p : m->parameters()) expected += static_cast<std::size_t>(p.numel());
  for (std::size_t k = 0; k < c.fixed_from; ++k) expected += static_cast<std::size_t>(c.inputs[k].numel());
  EXPECT_EQ(compared, expected);
}

TEST(NnGradcheck, EveryModuleMatchesFiniteDifferences) {
  for (const ModuleCase& c : module_cases()) check(c);
}

}  // namespace
}  // namespace lt::test
