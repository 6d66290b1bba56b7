// The debugging tools: plan dumps, step closures and NaN hunting.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PlanDump, TextShowsEachKernelItsMembersAndWhereValuesLive) {
  lt::Tensor x = lt::full({8, 4}, 0.5f, lt::device()), w = lt::full({4, 3}, 0.25f, lt::device());
  lt::sync();
  lt::Tensor h = (x.matmul(w) + 1.0f).relu();  // a product with its epilogue
  lt::Tensor y = lt::softmax(h, 1).sum(1);      // a row group
  const std::string text = lt::debug::plan_text({h, y});
  EXPECT_TRUE(has(text, "plan: ")) << text;
  EXPECT_TRUE(has(text, "fused group of")) << text;
  EXPECT_TRUE(has(text, "-> input")) << text;
  EXPECT_TRUE(has(text, "-> result 0")) << text;
  EXPECT_TRUE(has(text, "-> result 1")) << text;
  EXPECT_TRUE(has(text, "scratch tile")) << text;
  EXPECT_TRUE(has(text, "= matmul(%")) << text;
  EXPECT_TRUE(has(text, "[product]")) << text;
  EXPECT_TRUE(has(text, "    reads %")) << text;
  // Each kernel and member names the line that recorded it.
  auto line_with = [&](const std::string& part) {
    const std::size_t at = text.find(part), start = text.rfind('\n', at) + 1;
    return at == std::string::npos ? std::string() : text.substr(start, text.find('\n', at) - start);
  };
  const std::string h_at = "  # runtime/debug_tools_test.cpp:" + std::to_string(__LINE__ - 17);
  const std::string y_at = "  # runtime/debug_tools_test.cpp:" + std::to_string(__LINE__ - 17);
  EXPECT_TRUE(line_with("[product]").ends_with(h_at)) << text;
  EXPECT_TRUE(line_with("-> result 1").ends_with(y_at)) << text;
  // Dumping runs nothing: the values are still pending and come out as before.
  std::vector<float> got = y.to_vector<float>();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_NEAR(got[0], 1.0f, 1e-5f);
}

TEST(PlanDump, DotHasAClusterPerKernelAndEveryEdge) {
  lt::Tensor x = lt::full({8, 4}, 0.5f, lt::device());
  lt::sync();
  lt::Tensor y = lt::Tensor(x * 2.0f + 1.0f).sum(0);
  const std::string dot = lt::debug::plan_dot({y});
  EXPECT_EQ(dot.rfind("digraph plan {", 0), 0u) << dot;
  EXPECT_TRUE(has(dot, "subgraph cluster_0")) << dot;
  EXPECT_TRUE(has(dot, "result 0")) << dot;
  EXPECT_TRUE(has(dot, " -> n")) << dot;
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_TRUE(has(dot, "}\n"));
}

TEST(StepClosures, RunAfterTheirStepWithItsValuesInPlace) {
  lt::Tensor x = lt::full({4}, 1.0f, lt::device());
  lt::sync();
  std::vector<float> seen;
  for (int step = 0; step < 3; ++step) {
    x = x * 2.0f;
    lt::Tensor loss = x.sum();
    lt::add_step_closure([loss, &seen] { seen.push_back(loss.item<float>()); });
    lt::sync();
  }
  lt::wait_device_ops();
  EXPECT_EQ(seen, (std::vector<float>{8.0f, 16.0f, 32.0f}));
}

TEST(StepClosures, RunInOrderAndABarrierWithNothingToRunRunsThem) {
  std::vector<int> order;
  lt::add_step_closure([&] { order.push_back(1); });
  lt::add_step_closure([&] { order.push_back(2); });
  lt::sync();  // nothing pending
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(StepClosures, AClosureErrorIsRaisedByTheNextWait) {
  lt::Tensor x = lt::full({4}, 1.0f, lt::device());
  lt::sync();
  x = x + 1.0f;
  lt::add_step_closure([] { lt::fail("closure failed on purpose"); });
  EXPECT_NO_THROW(lt::sync());  // a barrier returns once its step is queued
  try {
    lt::wait_device_ops();
    lt::sync();  // whichever of the two sees the error first raises it
    FAIL() << "the closure's error was not raised";
  } catch (const lt::Error& e) {
    EXPECT_TRUE(has(e.what(), "closure failed on purpose")) << e.what();
  }
  EXPECT_NO_THROW(lt::wait_device_ops());  // raised once
  EXPECT_EQ(x.to_vector<float>()[0], 2.0f);
}

TEST(NanCheck, NamesTheFirstOpThatMadeANaN) {
  lt::Tensor x = lt::full({4}, -1.0f, lt::device());
  lt::sync();
  lt::debug::check_nan(true);
  lt::Tensor root = lt::sqrt(x);  // of a negative number: the NaN starts here
  lt::Tensor y = (root + 1.0f) * 2.0f;
  try {
    lt::sync();
    (void)y.to_vector<float>();
    lt::debug::check_nan(false);
    FAIL() << "no error";
  } catch (const lt::Error& e) {
    lt::debug::check_nan(false);
    EXPECT_TRUE(has(e.what(), "check_nan: %")) << e.what();
    EXPECT_TRUE(has(e.what(), "sqrt(%0)")) << e.what();
    EXPECT_TRUE(has(e.what(), "f32[4] produced a NaN at element 0")) << e.what();
  }
  lt::wait_device_ops();
  // Finite values pass, and the device stays usable.
  lt::debug::check_nan(true);
  lt::Tensor z = lt::full({4}, 4.0f, lt::device()).sqrt() + 1.0f;
  lt::sync();
  EXPECT_EQ(z.to_vector<float>()[0], 3.0f);
  lt::debug::check_nan(false);
}

TEST(NanCheck, OffByDefaultSoANaNIsAValue) {
  lt::Tensor y = lt::full({2}, 0.0f, lt::device()) / 0.0f;
  lt::sync();
  EXPECT_TRUE(std::isnan(y.to_vector<float>()[0]));
}

}  // namespace
