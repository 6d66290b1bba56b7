// The profiler's trace file, parsed: its spans closed and nested on every track, one execute
// span per step with the step's kernels inside it, an arrow from each barrier to its step, the
// counters, and the kernel table. A program that knows nothing of the profiler writes a trace
// under LT_PROFILE. A recording keeps its first events up to its limit, each span and arrow
// whole, and says how many it dropped.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernel_levels.hpp>

namespace {

using nlohmann::json;

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("lazytensor_profiler_" + std::to_string(::getpid()) + "_" + name);
}

json read_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

struct SpanAt {
  std::string name, category;
  double start = 0, end = 0;  // microseconds
  int pid = 0, tid = 0;
  json args;
  bool contains(double t) const { return start - 1e-3 <= t && t <= end + 1e-3; }
  bool contains(const SpanAt& s) const { return contains(s.start) && contains(s.end); }
};

std::vector<SpanAt> spans_of(const json& trace) {
  std::vector<SpanAt> spans;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double ts = e.at("ts"), dur = e.at("dur");
    spans.push_back({e.at("name"), e.at("cat"), ts, ts + dur, e.at("pid"), e.at("tid"), e.at("args")});
  }
  return spans;
}

std::vector<SpanAt> named(const std::vector<SpanAt>& spans, const std::string& category) {
  std::vector<SpanAt> out;
  for (const SpanAt& s : spans)
    if (s.category == category) out.push_back(s);
  return out;
}

/// Every event is a closed span, a counter, a flow end or metadata; on each track, the spans
/// taken by start (the longer first) each lie inside the one still open or start after it ends.
void expect_well_formed(const json& trace) {
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "C" || ph == "s" || ph == "f" || ph == "M") << e.dump();
    EXPECT_TRUE(e.contains("pid") && e.contains("name")) << e.dump();
    if (ph == "X") EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
  }
  std::map<std::pair<int, int>, std::vector<SpanAt>> tracks;
  for (const SpanAt& s : spans_of(trace)) tracks[{s.pid, s.tid}].push_back(s);
  for (auto& [track, spans] : tracks) {
    std::stable_sort(spans.begin(), spans.end(), [](const SpanAt& a, const SpanAt& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<SpanAt> open;
    for (const SpanAt& s : spans) {
      while (!open.empty() && open.back().end <= s.start + 1e-3 && !open.back().contains(s)) open.pop_back();
      if (!open.empty()) EXPECT_TRUE(open.back().contains(s)) << s.name << " overlaps " << open.back().name << " on track "
                                                               << track.first << "/" << track.second;
      open.push_back(s);
    }
  }
}

/// A step with a product and its epilogue, a row reduction and a fused elementwise tail.
lt::Tensor traced_step(const lt::Tensor& x, const lt::Tensor& w) {
  lt::Tensor h = (x.matmul(w) + 1.0f).relu();
  return lt::softmax(h, 1).sum(1) * 2.0f;
}

TEST(Profiler, TraceSpansAreClosedAndNested) {
  const auto path = temp_path("steps.json");
  lt::Tensor x = lt::full({64, 32}, 0.5f, lt::device()), w = lt::full({32, 16}, 0.25f, lt::device());
  lt::sync();
  lt::wait_device_ops();  // the step that made x and w runs before the recording
  constexpr int steps = 3;
  {
    lt::profiler::Recording recording(path.string());
    EXPECT_TRUE(lt::profiler::active());
    for (int s = 0; s < steps; ++s) {
      auto user = lt::profiler::scope("user step");
      lt::Tensor y = traced_step(x, w);
      lt::sync();
      EXPECT_EQ(y.to_vector<float>().size(), 64u);
    }
  }
  EXPECT_FALSE(lt::profiler::active());
  const json trace = read_trace(path);
  expect_well_formed(trace);
  const std::vector<SpanAt> spans = spans_of(trace);

  // One execute span per step, on the device's step track.
  const std::vector<SpanAt> executes = named(spans, "execute");
  ASSERT_EQ(executes.size(), static_cast<std::size_t>(steps));
  for (const SpanAt& e : executes) {
    EXPECT_EQ(e.pid, 100);  // lazy:0
    EXPECT_EQ(e.tid, 1);
  }
  // Every kernel runs inside an execute span of its track; they note ops, bytes and FLOPs.
  const std::vector<SpanAt> kernels = named(spans, "kernel");
  ASSERT_FALSE(kernels.empty());
  bool fused = false, with_flops = false;
  for (const SpanAt& k : kernels) {
    EXPECT_TRUE(std::any_of(executes.begin(), executes.end(), [&](const SpanAt& e) {
      return e.pid == k.pid && e.tid == k.tid && e.contains(k);
    })) << k.name;
    EXPECT_TRUE(k.args.contains("ops") && k.args.contains("bytes") && k.args.contains("shape")) << k.args.dump();
    EXPECT_GT(k.args.at("bytes").get<double>(), 0.0) << k.name;
    fused = fused || k.name.rfind("fused ", 0) == 0;
    with_flops = with_flops || (k.args.contains("flops") && k.args.at("flops").get<double>() > 0);
  }
  EXPECT_TRUE(fused);
  EXPECT_TRUE(with_flops);
  // The first step compiled (unless a test before it in this process ran the same graph), the
  // others came from the cache.
  const std::vector<SpanAt> compiles = named(spans, "compile");
  ASSERT_LE(compiles.size(), 1u);
  for (const SpanAt& c : compiles) {
    EXPECT_GT(c.args.at("nodes").get<double>(), 0.0);
    EXPECT_LT(c.end, executes[0].start + 1e-3);
  }
  // The barriers, the user's spans and the tracing between barriers.
  const std::vector<SpanAt> barriers = named(spans, "barrier");
  EXPECT_GE(std::count_if(barriers.begin(), barriers.end(), [](const SpanAt& s) { return s.name == "barrier"; }), steps);
  const std::vector<SpanAt> users = named(spans, "user");
  ASSERT_EQ(users.size(), static_cast<std::size_t>(steps));
  for (const SpanAt& u : users) EXPECT_EQ(u.pid, 1);
  EXPECT_GE(named(spans, "tracing").size(), static_cast<std::size_t>(steps - 1));

  // An arrow from each step's barrier to its execute span.
  std::map<std::uint64_t, std::vector<json>> flows;
  std::map<std::string, int> counters;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "s" || e.at("ph") == "f") flows[e.at("id").get<std::uint64_t>()].push_back(e);
    if (e.at("ph") == "C") ++counters[e.at("name").get<std::string>()];
  }
  ASSERT_EQ(flows.size(), static_cast<std::size_t>(steps));
  for (const auto& [id, ends] : flows) {
    ASSERT_EQ(ends.size(), 2u) << id;
    const json& from = ends[0].at("ph") == "s" ? ends[0] : ends[1];
    const json& to = ends[0].at("ph") == "s" ? ends[1] : ends[0];
    EXPECT_EQ(to.at("ph"), "f");
    EXPECT_EQ(to.at("bp"), "e");
    EXPECT_TRUE(std::any_of(barriers.begin(), barriers.end(), [&](const SpanAt& b) {
      return b.name == "barrier" && b.pid == from.at("pid") && b.tid == from.at("tid") && b.contains(from.at("ts").get<double>());
    })) << from.dump();
    EXPECT_TRUE(std::any_of(executes.begin(), executes.end(), [&](const SpanAt& e) {
      return e.pid == to.at("pid") && e.tid == to.at("tid") && std::abs(e.start - to.at("ts").get<double>()) < 1e-3;
    })) << to.dump();
  }
  EXPECT_GE(counters["arena bytes"], steps);
  EXPECT_GE(counters["pending tensors"], steps);
  std::filesystem::remove(path);
}

TEST(Profiler, KernelTableListsTheRecordedKernels) {
  const auto path = temp_path("table.json");
  lt::Tensor x = lt::full({64, 32}, 0.5f, lt::device()), w = lt::full({32, 16}, 0.25f, lt::device());
  lt::sync();
  {
    lt::profiler::Recording recording(path.string());
    for (int s = 0; s < 4; ++s) {
      lt::Tensor y = traced_step(x, w);
      lt::sync();
    }
  }
  const std::string table = lt::profiler::summary();
  EXPECT_NE(table.find("GB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("fused "), std::string::npos) << table;
  // The table names the kernels' level and the CPU they ran on.
  EXPECT_NE(table.find("kernels at level " + std::string(lt::capability_name(lt::running_kernels().level)) + ", CPU "),
            std::string::npos)
      << table;
  // Four steps ran each kernel four times.
  EXPECT_NE(table.find("       4 "), std::string::npos) << table;
  std::filesystem::remove(path);
}

TEST(Profiler, StartWhileRecordingRaisesAndStopWithoutOneDoesNothing) {
  const auto path = temp_path("twice.json");
  lt::profiler::stop();
  EXPECT_FALSE(std::filesystem::exists(path));
  lt::profiler::start(path.string());
  EXPECT_THROW(lt::profiler::start(path.string()), lt::Error);
  lt::profiler::stop();
  expect_well_formed(read_trace(path));
  EXPECT_THROW(lt::profiler::start(""), lt::Error);
  std::filesystem::remove(path);
}

TEST(Profiler, AnUnmodifiedProgramWritesATraceUnderTheEnvironmentVariable) {
  const auto path = temp_path("env.json");
  const std::string command = "LT_PROFILE=" + path.string() + " " + LAZYTENSOR_PROFILE_PROBE;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const json trace = read_trace(path);
  expect_well_formed(trace);
  const std::vector<SpanAt> spans = spans_of(trace);
  EXPECT_EQ(named(spans, "execute").size(), 5u);  // the probe's five steps
  EXPECT_FALSE(named(spans, "kernel").empty());
  std::filesystem::remove(path);
}

/// The events of a trace that took a slot of its recording: all but metadata and the arrows'
/// ends, which go with their starts.
std::size_t slot_events(const json& trace) {
  std::size_t n = 0;
  for (const json& e : trace.at("traceEvents")) n += e.at("ph") != "M" && e.at("ph") != "f";
  return n;
}

TEST(Profiler, ARecordingKeepsItsFirstEventsAndSaysHowManyItDropped) {
  const auto path = temp_path("capped.json");
  lt::Tensor x = lt::full({64, 32}, 0.5f, lt::device()), w = lt::full({32, 16}, 0.25f, lt::device());
  lt::sync();
  lt::wait_device_ops();
  constexpr std::size_t cap = 60;
  {
    lt::profiler::Recording recording(path.string(), cap);
    for (int s = 0; s < 12; ++s) {  // some 15 events a step
      auto user = lt::profiler::scope("user step");
      lt::Tensor y = traced_step(x, w);
      lt::sync();
      (void)y.to_vector<float>();
    }
  }
  const json trace = read_trace(path);
  expect_well_formed(trace);  // every span kept is closed, and nested in what encloses it
  EXPECT_EQ(slot_events(trace), cap);
  EXPECT_EQ(trace.at("otherData").at("max_events").get<std::size_t>(), cap);
  const auto dropped = trace.at("otherData").at("dropped_events").get<std::size_t>();
  EXPECT_GT(dropped, cap) << "twelve steps make more than twice the limit";
  // An arrow is kept whole or not at all: an end whose start was kept is never dropped.
  std::map<std::uint64_t, std::string> ends;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "s" || e.at("ph") == "f") ends[e.at("id").get<std::uint64_t>()] += e.at("ph").get<std::string>();
  EXPECT_FALSE(ends.empty());
  for (const auto& [id, phases] : ends) EXPECT_TRUE(phases == "sf" || phases == "fs") << id << ": " << phases;
  // The first steps are there, the last are not: the kept events are the first ones.
  const std::vector<SpanAt> users = named(spans_of(trace), "user");
  EXPECT_GE(users.size(), 1u);
  EXPECT_LT(users.size(), 12u);
  const std::string table = lt::profiler::summary();
  EXPECT_NE(table.find("Partial: the recording kept its first 60 events and dropped " + std::to_string(dropped)),
            std::string::npos) << table;
  std::filesystem::remove(path);
}

TEST(Profiler, ARecordingUnderItsLimitDropsNothing) {
  const auto path = temp_path("uncapped.json");
  lt::Tensor x = lt::full({64, 32}, 0.5f, lt::device()), w = lt::full({32, 16}, 0.25f, lt::device());
  lt::sync();
  lt::wait_device_ops();
  {
    lt::profiler::Recording recording(path.string(), 0);  // no limit
    lt::Tensor y = traced_step(x, w);
    lt::sync();
  }
  const json trace = read_trace(path);
  EXPECT_EQ(trace.at("otherData").at("dropped_events").get<std::size_t>(), 0u);
  EXPECT_EQ(trace.at("otherData").at("max_events").get<std::size_t>(), 0u);
  EXPECT_EQ(lt::profiler::summary().find("Partial"), std::string::npos) << lt::profiler::summary();
  EXPECT_GT(lt::profiler::default_max_events(), 0u) << "a recording has a limit unless told otherwise";
  std::filesystem::remove(path);
}

TEST(Profiler, TheEnvironmentVariableSetsTheLimit) {
  const auto path = temp_path("env_capped.json");
  const std::string command =
      "LT_PROFILE_MAX_EVENTS=10 LT_PROFILE=" + path.string() + " " + LAZYTENSOR_PROFILE_PROBE + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const json trace = read_trace(path);
  expect_well_formed(trace);
  EXPECT_EQ(slot_events(trace), 10u);
  EXPECT_EQ(trace.at("otherData").at("max_events").get<std::size_t>(), 10u);
  EXPECT_GT(trace.at("otherData").at("dropped_events").get<std::size_t>(), 0u);
  std::filesystem::remove(path);
}

}  // namespace
