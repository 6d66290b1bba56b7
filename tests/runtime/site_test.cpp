// What the runtime says names the line that recorded the node it is about: why a graph
// compiled, a fault found while a step runs (raised at the barrier or by a read, fused or not),
// a NaN the check finds. And the line stays out of the plan's key: one graph recorded from two
// places compiles once.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the plan cache, cleared here

namespace lt {
namespace {

std::string here(int line) { return "runtime/site_test.cpp:" + std::to_string(line); }
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The message of the lt::Error that `f` raises ("" when it raises none).
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class RuntimeSites : public ::testing::Test {
 protected:
  void SetUp() override {
    wait_device_ops();
    plan_cache().clear();
    metrics::reset();
  }
};

TEST_F(RuntimeSites, OneGraphFromTwoLinesIsOnePlan) {
  Tensor x = from_vector<float>({1, 2, 3}, device());
  sync();
  Tensor a = exp(x) * 2.0 + x;
  sync();
  wait_device_ops();
  ASSERT_EQ(metrics::counter("UncachedCompile"), 1);
  const std::int64_t hits = metrics::counter("CachedCompile");
  Tensor b = exp(x) * 2.0 + x;  // the same graph, recorded from another line
  sync();
  wait_device_ops();
  EXPECT_EQ(metrics::counter("UncachedCompile"), 1) << "a graph's lines must not enter its key";
  EXPECT_EQ(metrics::counter("CachedCompile"), hits + 1);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
}

TEST_F(RuntimeSites, ACompileReasonNamesTheLineOfTheNodeThatDiffers) {
  debug::explain_compiles(true);
  Tensor x = from_vector<float>({1, 2, 3}, device());
  sync();
  Tensor a = sum(exp(x));
  sync();
  Tensor b = sum(log(x));  // differs from the cached graph at its second node
  const int differing = __LINE__ - 1;
  sync();
  wait_device_ops();
  debug::explain_compiles(false);
  const std::string why = debug::last_compile_reason();
  EXPECT_TRUE(has(why, "differs at %1 = log f32[3], recorded at " + here(differing))) << why;
  EXPECT_TRUE(has(why, "the cached graph has exp there")) << why;
  EXPECT_TRUE(has(why, "(read by %2 = sum, recorded at " + here(differing) + ")")) << why;
}

TEST_F(RuntimeSites, AFaultRaisedAtTheBarrierNamesTheLineThatRecordedTheNode) {
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, device());
  Tensor bad = from_vector<std::int64_t>({0, 2, 7, 1}, {2, 2}, device());
  sync();
  Tensor g = x.gather(1, bad);
  const int gathered = __LINE__ - 1;
  Tensor y = g * 2.0;
  const std::string raised = error_of([&] {
    sync();
    wait_device_ops();  // the step runs on the device's worker
  });
  EXPECT_TRUE(has(raised, "gather: index 7 is out of range for dim 1 of size 3")) << raised;
  EXPECT_TRUE(has(raised, "(gather recorded at " + here(gathered) + ")")) << raised;
  // Read again, the value raises it again, named the same way.
  const std::string read = error_of([&] { (void)y.to_vector<float>(); });
  EXPECT_TRUE(has(read, "(gather recorded at " + here(gathered) + ")")) << read;
  wait_device_ops();
}

TEST_F(RuntimeSites, AFaultInsideAFusedGroupNamesItsMembersLine) {
  Tensor a = from_vector<std::int64_t>({7, 8, 9, 10}, device());
  Tensor b = from_vector<std::int64_t>({2, 0, 3, 4}, device());
  Tensor c = from_vector<std::int64_t>({1, 1, 1, 1}, device());
  sync();
  Tensor s = a * c + 1;  // a fused group: the fault is not in its first member
  Tensor r = fmod(s, b);
  const int divided = __LINE__ - 1;
  Tensor t = r * 3 + s;
  const std::string raised = error_of([&] { (void)t.to_vector<std::int64_t>(); });
  EXPECT_TRUE(has(raised, "fmod: integer division by zero")) << raised;
  EXPECT_TRUE(has(raised, "recorded at " + here(divided) + ")")) << raised;
  wait_device_ops();
}

TEST_F(RuntimeSites, AFaultUnderTheReferenceExecutorNamesTheLineToo) {
  Tensor x = from_vector<float>({1, 2, 3}, device());
  Tensor bad = from_vector<std::int64_t>({0, 5}, device());
  sync();
  debug::check_nan(true);  // steps run node by node
  Tensor y = x.index_select(0, bad);
  const int selected = __LINE__ - 1;
  const std::string raised = error_of([&] { (void)y.to_vector<float>(); });
  debug::check_nan(false);
  EXPECT_TRUE(has(raised, "index_select: index 5 is out of range")) << raised;
  EXPECT_TRUE(has(raised, "(index_select recorded at " + here(selected) + ")")) << raised;
  wait_device_ops();
}

TEST_F(RuntimeSites, TheNanCheckNamesTheLineThatMadeTheNaN) {
  Tensor x = full({4}, -1.0f, device());
  sync();
  debug::check_nan(true);
  Tensor root = sqrt(x);
  const int made = __LINE__ - 1;
  Tensor y = (root + 1.0f) * 2.0f;
  const std::string raised = error_of([&] { (void)y.to_vector<float>(); });
  debug::check_nan(false);
  EXPECT_TRUE(has(raised, "check_nan: %1 = sqrt(%0) f32[4] produced a NaN at element 0, recorded at " + here(made) +
                              " (LT_CHECK_NAN)"))
      << raised;
  wait_device_ops();
}

}  // namespace
}  // namespace lt
