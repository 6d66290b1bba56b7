// Metrics: counters, timed metrics with percentiles, the text report, and what each barrier
// records.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

namespace lt {
namespace {

class Metrics : public ::testing::Test {
 protected:
  void SetUp() override {
    sync();
    metrics::reset();
  }
};

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

TEST_F(Metrics, CountersCountAndReset) {
  EXPECT_EQ(metrics::counter("TestNeverCounted"), 0);
  metrics::Counter& c = metrics::counter_handle("TestCounter");
  c.add();
  c.add(4);
  EXPECT_EQ(metrics::counter("TestCounter"), 5);
  EXPECT_EQ(&metrics::counter_handle("TestCounter"), &c) << "handles are stable";
  EXPECT_TRUE(contains(metrics::counter_names(), "TestCounter"));
  EXPECT_FALSE(contains(metrics::counter_names(), "TestNeverCounted"));
  metrics::reset();
  EXPECT_EQ(metrics::counter("TestCounter"), 0);
  EXPECT_FALSE(contains(metrics::counter_names(), "TestCounter")) << "only counters that counted are listed";
  c.add();
  EXPECT_EQ(metrics::counter("TestCounter"), 1) << "a handle keeps working after a reset";
}

TEST_F(Metrics, TimerPercentilesOnKnownSamples) {
  metrics::Timer& t = metrics::timer_handle("TestTimer");
  // 101 samples, 1 ms to 101 ms, recorded out of order.
  for (int k = 101; k >= 1; k -= 2) t.record(k * 1e-3);
  for (int k = 2; k <= 100; k += 2) t.record(k * 1e-3);
  metrics::Timer::Summary s = metrics::timer("TestTimer");
  EXPECT_EQ(s.count, 101);
  EXPECT_NEAR(s.total, 5.151, 1e-12);
  ASSERT_EQ(s.sorted.size(), 101u);
  EXPECT_TRUE(std::is_sorted(s.sorted.begin(), s.sorted.end()));
  // Rank p / 100 * (n - 1), rounded to the nearest sample.
  EXPECT_DOUBLE_EQ(s.percentile(0), 1e-3);
  EXPECT_DOUBLE_EQ(s.percentile(1), 2e-3);
  EXPECT_DOUBLE_EQ(s.percentile(50), 51e-3);
  EXPECT_DOUBLE_EQ(s.percentile(90), 91e-3);
  EXPECT_DOUBLE_EQ(s.percentile(99), 100e-3);
  EXPECT_DOUBLE_EQ(s.percentile(100), 101e-3);
  EXPECT_EQ(metrics::Timer::Summary{}.percentile(50), 0) << "no samples";
}

TEST_F(Metrics, TimerKeepsTheMostRecentWindowButCountsAll) {
  metrics::Timer& t = metrics::timer_handle("TestWindow");
  const int n = static_cast<int>(metrics::Timer::window) + 76;
  double total = 0;
  for (int k = 0; k < n; ++k) {
    t.record(k);
    total += k;
  }
  metrics::Timer::Summary s = t.summary();
  EXPECT_EQ(s.count, n);
  EXPECT_DOUBLE_EQ(s.total, total);
  ASSERT_EQ(s.sorted.size(), metrics::Timer::window);
  EXPECT_EQ(s.sorted.front(), 76);
  EXPECT_EQ(s.sorted.back(), n - 1);
  t.reset();
  EXPECT_EQ(t.summary().count, 0);
}

TEST_F(Metrics, ReportBlocks) {
  metrics::Timer& t = metrics::timer_handle("TestReportTimer");
  for (int k = 1; k <= 101; ++k) t.record(k * 1e-3);
  metrics::counter_handle("TestReportCounter").add(3);
  std::string r = metrics::report();
  EXPECT_NE(r.find("Metric: TestReportTimer\n"
                   "  TotalSamples: 101\n"
                   "  Accumulator: 5.151s\n"
                   "  Percentiles: 1%=2.000ms; 5%=6.000ms; 10%=11.000ms; 20%=21.000ms; 50%=51.000ms; 80%=81.000ms; "
                   "90%=91.000ms; 95%=96.000ms; 99%=100.000ms\n"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("Counter: TestReportCounter\n  Value: 3\n"), std::string::npos) << r;
  metrics::reset();
  r = metrics::report();
  EXPECT_EQ(r.find("TestReportTimer"), std::string::npos) << "timers without samples are left out";
  EXPECT_EQ(r.find("TestReportCounter"), std::string::npos) << "zero counters are left out";
}

TEST_F(Metrics, MicrosecondsInTheReport) {
  metrics::timer_handle("TestMicroTimer").record(2.5e-6);
  std::string r = metrics::report();
  EXPECT_NE(r.find("Metric: TestMicroTimer\n  TotalSamples: 1\n  Accumulator: 2.500us\n"), std::string::npos) << r;
}

TEST_F(Metrics, EachBarrierWithWorkRecordsCompileAndExecuteTime) {
  plan_cache().clear();
  Tensor x = from_vector<float>({1, 2, 3}, device());
  for (int step = 1; step <= 3; ++step) {
    x = x * 2;
    sync();
    // The same graph each step: compiled once, then taken from the plan cache.
    EXPECT_EQ(metrics::timer("CompileTime").count, 1);
    EXPECT_EQ(metrics::counter("CachedCompile"), step - 1);
    EXPECT_EQ(metrics::timer("ExecuteTime").count, step);
    EXPECT_EQ(metrics::counter("MarkStep"), step);
  }
  sync();  // nothing pending: counted as a step, nothing compiled or run
  EXPECT_EQ(metrics::counter("MarkStep"), 4);
  EXPECT_EQ(metrics::timer("CompileTime").count, 1);
  EXPECT_EQ(metrics::timer("ExecuteTime").count, 3);
  EXPECT_EQ(metrics::counter("lt::mul"), 3);
  EXPECT_GE(metrics::timer("ExecuteTime").total, 0.0);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{8, 16, 24}));

  std::string r = metrics::report();
  for (const char* block : {"Metric: CompileTime\n  TotalSamples: 1\n", "Metric: ExecuteTime\n  TotalSamples: 3\n",
                            "Counter: MarkStep\n  Value: 4\n", "Counter: lt::mul\n  Value: 3\n",
                            "Counter: TransferFromDevice\n  Value: 1\n"})
    EXPECT_NE(r.find(block), std::string::npos) << block << " missing from:\n" << r;
}

}  // namespace
}  // namespace lt
