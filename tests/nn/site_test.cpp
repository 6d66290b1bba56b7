// Layers, containers, losses and optimizer steps record their ops at the line that called
// them; a module of the user's own records each op at its own line in its forward.
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

std::string here(int line) { return "nn/site_test.cpp:" + std::to_string(line); }

TEST(NnSites, ALayerNamesTheLineThatCalledIt) {
  nn::Linear fc(3, 2);
  fc.to(device());
  Tensor x = ones({4, 3}, device());
  sync();
  Tensor y = fc(x);
  expect_all_at({y}, here(__LINE__ - 1), 3);  // the transposed weight, the product, the bias
  Tensor z = fc.forward(x);
  expect_all_at({z}, here(__LINE__ - 1), 3);
}

TEST(NnSites, AContainerNamesTheLineThatCalledIt) {
  nn::Sequential net(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  net.to(device());
  Tensor x = ones({4, 3}, device());
  sync();
  Tensor y = net(x);
  expect_all_at({y}, here(__LINE__ - 1), 7);
}

struct Net : nn::Module {
  nn::Linear fc1{3, 4}, fc2{4, 2};
  Net() { LT_REGISTER_MODULES(fc1, fc2); }
  static constexpr int first = __LINE__ + 2;  // the lines of forward's three statements
  Tensor forward(const Tensor& x) {
    Tensor h = fc1(x);
    h = relu(h);
    return fc2(h);
  }
};

TEST(NnSites, AModuleOfTheUsersOwnNamesItsOwnLines) {
  Net net;
  net.to(device());
  Tensor x = ones({4, 3}, device());
  sync();
  const Tensor y = net.forward(x);
  const std::vector<std::string> lines = node_lines({y});
  auto count_at = [&](int line) {
    int n = 0;
    for (const std::string& l : lines) n += l.find("  # " + here(line)) != std::string::npos;
    return n;
  };
  EXPECT_EQ(lines.size(), 7u) << debug::ir_text({y});
  EXPECT_EQ(count_at(Net::first), 3) << debug::ir_text({y});      // fc1: weight transposed, product, bias
  EXPECT_EQ(count_at(Net::first + 1), 1) << debug::ir_text({y});  // relu
  EXPECT_EQ(count_at(Net::first + 2), 3) << debug::ir_text({y});  // fc2
}

TEST(NnSites, ALossAndAnOptimizerStepNameTheirCallers) {
  Tensor w = zeros({3}, device()).requires_grad_();
  Tensor target = ones({3}, device());
  sync();
  Tensor loss = nn::functional::mse_loss(w * 2.0, target);
  const std::string loss_at = here(__LINE__ - 1);
  const std::vector<std::string> lines = node_lines({loss});
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("# " + loss_at), std::string::npos) << debug::ir_text({loss});
  loss.backward();
  const std::string backward_at = here(__LINE__ - 1);
  EXPECT_NE(node_lines({w.grad()}).back().find("# " + backward_at), std::string::npos) << debug::ir_text({w.grad()});
  optim::SGD opt({w}, {.lr = 0.1});
  opt.step();
  const std::string step_at = here(__LINE__ - 1);
  EXPECT_NE(node_lines({w}).back().find("# " + step_at), std::string::npos) << debug::ir_text({w});
}

}  // namespace
}  // namespace lt::test
