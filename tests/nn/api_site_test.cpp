// Calling a module through nn::Callable keeps the line convention of the layers: a layer's ops
// name the line that called it, a model of the user's own names its own lines unless its
// forward takes the caller's line, and zero_grad's zeros name its caller.
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

std::string here(int line) { return "nn/api_site_test.cpp:" + std::to_string(line); }

/// How many compute nodes of the graph of `ts` name `site`.
std::size_t count_at(const std::vector<Tensor>& ts, const std::string& site) {
  std::size_t n = 0;
  for (const std::string& line : node_lines(ts)) n += line.find("  # " + site) != std::string::npos;
  return n;
}

struct OwnLines : nn::Callable<OwnLines> {
  nn::Linear fc1{3, 4}, fc2{4, 2};
  OwnLines() { LT_REGISTER_MODULES(fc1, fc2); }
  static constexpr int first = __LINE__ + 2;  // the lines of forward's three statements
  Tensor forward(const Tensor& x) const {
    Tensor h = fc1(x);
    h = relu(h);
    return fc2(h);
  }
};

struct CallersLine : nn::Callable<CallersLine> {
  nn::Linear fc{3, 2};
  CallersLine() { LT_REGISTER_MODULES(fc); }
  Tensor forward(const Tensor& x, double scale, Site site = Site::current()) {
    RecordingSite at(site);
    return relu(fc(x)) * scale;
  }
};

class NnApiSites : public ::testing::Test {
 protected:
  void SetUp() override { sync(); }
  Tensor x = ones({4, 3}, device());
};

TEST_F(NnApiSites, ALayerCalledThroughCallableNamesItsCaller) {
  nn::Linear fc(3, 2);
  fc.to(device());
  const nn::Linear& constant = fc;
  sync();
  Tensor y = fc(x);
  expect_all_at({y}, here(__LINE__ - 1), 3);
  Tensor z = constant(x);
  expect_all_at({z}, here(__LINE__ - 1), 3);
}

TEST_F(NnApiSites, AModelOfTheUsersOwnNamesItsOwnLines) {
  OwnLines net;
  net.to(device());
  sync();
  const Tensor y = net(x);
  EXPECT_EQ(node_lines({y}).size(), 7u) << debug::ir_text({y});
  EXPECT_EQ(count_at({y}, here(OwnLines::first)), 3u) << debug::ir_text({y});
  EXPECT_EQ(count_at({y}, here(OwnLines::first + 1)), 1u) << debug::ir_text({y});
  EXPECT_EQ(count_at({y}, here(OwnLines::first + 2)), 3u) << debug::ir_text({y});
}

TEST_F(NnApiSites, AForwardThatTakesASiteGetsTheCallersLine) {
  CallersLine net;
  net.to(device());
  sync();
  Tensor y = net(x, 2.0);
  expect_all_at({y}, here(__LINE__ - 1), 4);  // the linear layer, and relu * scale fused
  // Inside a Sequential the outermost call wins, for a model of the user's own too.
  nn::Sequential seq{OwnLines(), nn::ReLU()};
  seq.to(device());
  sync();
  Tensor z = seq(x);
  expect_all_at({z}, here(__LINE__ - 1), 8);
}

TEST_F(NnApiSites, AttentionWithoutWeightsNamesItsCaller) {
  nn::MultiheadAttention mha(4, 2);
  mha.to(device());
  Tensor q = ones({3, 2, 4}, device());
  sync();
  auto [out, none] = mha(q, q, q, {}, /*need_weights=*/false);
  expect_all_at({out}, here(__LINE__ - 1), 10);
  EXPECT_FALSE(none.defined());
}

TEST_F(NnApiSites, ZeroGradNamesItsCaller) {
  nn::Linear fc(3, 2);
  fc.to(device());
  fc(x).sum().backward();
  sync();
  fc.zero_grad(/*set_to_none=*/false);
  expect_all_at({fc.weight.grad(), fc.bias.grad()}, here(__LINE__ - 1), 2);
  sync();
  optim::SGD opt(fc.parameters(), {.lr = 0.1});
  opt.zero_grad(false);
  expect_all_at({fc.weight.grad(), fc.bias.grad()}, here(__LINE__ - 1), 2);
}

}  // namespace
}  // namespace lt::test
