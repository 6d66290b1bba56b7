// The persistent plan cache: a second process compiles nothing; damaged entries are counted
// misses with correct results; writers killed at any point never leave an entry that loads
// wrong.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

extern char** environ;

namespace lt {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the system's temporary folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("lt_plan_cache_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct ProbeCounts {
  long long uncached = -1, cached = -1, hit = -1, miss = -1, bad = -1;
  double checksum = 0;
  int wrong = -1;
};

/// Runs the probe with `args` (and the environment assignments `env`) and reads what it prints.
ProbeCounts run_probe(const std::string& args, const std::string& env = "") {
  std::string command = env + (env.empty() ? "" : " ") + std::string(LAZYTENSOR_CACHE_PROBE) + " " + args;
  std::FILE* p = popen(command.c_str(), "r");
  ProbeCounts c;
  if (p == nullptr) return c;
  char line[512] = {};
  if (std::fgets(line, sizeof line, p) != nullptr) {
    std::sscanf(line, "uncached=%lld cached=%lld hit=%lld miss=%lld bad=%lld", &c.uncached, &c.cached, &c.hit, &c.miss,
                &c.bad);
    if (const char* s = std::strstr(line, "checksum=")) std::sscanf(s, "checksum=%lf", &c.checksum);
    if (const char* s = std::strstr(line, "wrong=")) std::sscanf(s, "wrong=%d", &c.wrong);
  }
  EXPECT_EQ(pclose(p), 0) << command;
  return c;
}

TEST(PersistentCache, ASecondProcessCompilesNothing) {
  TempDir dir;
  ProbeCounts first = run_probe("run " + dir.path().string());
  EXPECT_EQ(first.uncached, 5);  // the inputs, y, z and r at two sizes
  EXPECT_EQ(first.hit, 0);
  EXPECT_EQ(first.bad, 0);
  ProbeCounts second = run_probe("run " + dir.path().string());
  EXPECT_EQ(second.uncached, 0);
  EXPECT_EQ(second.hit, 5);
  EXPECT_EQ(second.miss, 0);
  EXPECT_EQ(second.bad, 0);
  EXPECT_EQ(second.checksum, first.checksum);
}

TEST(PersistentCache, PlansOfOneKernelLevelAreAMissAtAnother) {
  // The cache copied between CPUs: a process at another capability level finds no plan of the
  // first, compiles its own beside them, and then finds those; neither reads the other's.
  std::vector<CpuCapability> levels;  // compiled in this build and run by this CPU
  for (int k = 0; k < cpu_capability_count; ++k) {
    const auto level = static_cast<CpuCapability>(k);
    if (!cpu_supports(level)) continue;
    try {
      kernels_at(capability_name(level));
      levels.push_back(level);
    } catch (const Error&) {  // not compiled in this build
    }
  }
  if (levels.size() < 2) GTEST_SKIP() << "this build and CPU have one capability level";
  const std::string low(capability_name(levels.front())), high(capability_name(levels.back()));
  TempDir dir;
  auto at = [&](const std::string& level) { return run_probe("run " + dir.path().string(), "LT_CPU_CAPABILITY=" + level); };
  ProbeCounts written = at(low), other = at(high), again = at(high), first_again = at(low);
  EXPECT_EQ(written.uncached, 5);
  EXPECT_EQ(other.uncached, 5) << high << " read plans written at " << low;
  EXPECT_EQ(other.hit, 0);
  EXPECT_EQ(other.bad, 0) << "a plan of another level is a clean miss, not a bad entry";
  EXPECT_EQ(again.hit, 5);
  EXPECT_EQ(first_again.hit, 5);
  EXPECT_EQ(first_again.uncached, 0);
}

class PersistentCacheInProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    wait_device_ops();
    initialize_cache(dir_.path().string());
    plan_cache().clear();
    metrics::reset();
  }
  void TearDown() override {
    wait_device_ops();
    detail::persistent_cache().close();
    plan_cache().clear();
  }
  TempDir dir_;
};

/// A step whose graph is the same each time, with data `k`; returns its result.
std::vector<float> step(float k) {
  auto dev = device();
  Tensor y = lt::softmax(full({8, 5}, k, dev) * arange(0, 5, 1, dev).to(f32), 1).sum(0);
  sync();
  return y.to_vector<float>();
}
std::vector<float> expected(float k) {
  Tensor x = full({8, 5}, k);
  return lt::softmax(x * arange(0, 5, 1).to(f32), 1).sum(0).to_vector<float>();
}

TEST_F(PersistentCacheInProcess, DamagedEntriesAreCountedMissesWithRightResults) {
  step(0.5f);
  wait_device_ops();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir_.path())) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = entries[0];
  ASSERT_EQ(entry.extension(), ".ltplan");
  std::vector<char> original;
  {
    std::ifstream in(entry, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(original.size(), 64u);
  auto write_entry = [&](const std::vector<char>& bytes) {
    std::ofstream out(entry, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  auto expect_counted_miss = [&](const std::string& what, float k) {
    plan_cache().clear();
    std::int64_t bad = metrics::counter("PersistentCacheDeserializeFailure");
    std::int64_t compiled = metrics::counter("UncachedCompile");
    EXPECT_EQ(step(k), expected(k)) << what;
    EXPECT_EQ(metrics::counter("PersistentCacheDeserializeFailure"), bad + 1) << what;
    EXPECT_EQ(metrics::counter("UncachedCompile"), compiled + 1) << what;
    wait_device_ops();
  };
  // Every header byte, then offsets spread over the payload, one at a time (the compile
  // after a miss rewrites the entry).
  std::mt19937 rng(1234);
  const std::size_t stride = std::max<std::size_t>(1, original.size() / 200);
  for (std::size_t at = 0; at < original.size(); at += at < 48 ? 1 : stride) {
    std::vector<char> bytes = original;
    bytes[at] = static_cast<char>(bytes[at] ^ static_cast<char>(1 + rng() % 255));
    write_entry(bytes);
    expect_counted_miss("byte " + std::to_string(at) + " flipped", 0.25f * static_cast<float>(at % 7));
  }
  for (std::size_t size : {std::size_t{0}, std::size_t{7}, std::size_t{47}, std::size_t{48}, original.size() / 2,
                           original.size() - 1}) {
    write_entry(std::vector<char>(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(size)));
    expect_counted_miss("truncated to " + std::to_string(size), 1.5f);
  }
  // The sound entry is a hit again.
  write_entry(original);
  plan_cache().clear();
  std::int64_t hits = metrics::counter("PersistentCacheHit"), compiled = metrics::counter("UncachedCompile");
  EXPECT_EQ(step(2.0f), expected(2.0f));
  EXPECT_EQ(metrics::counter("PersistentCacheHit"), hits + 1);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled);
}

/// The one entry in `dir`.
fs::path only_entry(const fs::path& dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ltplan") entries.push_back(e.path());
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? fs::path() : entries[0];
}

/// Rewrites the entry at `path` with its plan changed by `forge`, and a checksum that fits:
/// what anyone who can write the directory can do.
void forge_entry(const fs::path& path, const std::function<void(Plan&)>& forge) {
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  detail::EntryHeader h{};
  ASSERT_GE(bytes.size(), sizeof h);
  std::memcpy(&h, bytes.data(), sizeof h);
  Plan plan = deserialize_plan(std::span(reinterpret_cast<const std::byte*>(bytes.data()) + sizeof h, bytes.size() - sizeof h));
  forge(plan);
  std::vector<std::byte> payload = serialize_plan(plan);
  h.payload_bytes = payload.size();
  h.checksum = hash_bytes(payload.data(), payload.size(), h.key);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
}

Meta pass_infer(std::span<const Meta> in, const Attrs&) { return in[0]; }
void pass_kernel(std::span<const View> in, const View& out, const Attrs&) { kernels::copy_into(in[0], out); }
// A program's own op, outside the registry: no loader can vouch for what it does.
constexpr OpDesc own_op{.id = static_cast<OpId>(op_id_limit - 2),
                        .name = "own_pass",
                        .kind = OpKind::movement,
                        .arity = 1,
                        .infer = &pass_infer,
                        .kernel = &pass_kernel};

TEST_F(PersistentCacheInProcess, APlanWithAProgramsOwnOpIsNeverStored) {
  Tensor x = full({4, 3}, 2.0f, device());
  Tensor y = Tensor(record(own_op, {x}) * 3.0f).sum(1);
  sync();
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(4, 18.0f));
  wait_device_ops();
  EXPECT_TRUE(fs::is_empty(dir_.path()));
  // Its plan, read back, is refused rather than trusted.
  Tensor z = record(own_op, {full({2}, 1.0f, device())});
  const NodePtr root = z.impl().node;
  Plan plan = make_plan(make_schedule(std::span(&root, 1)));
  EXPECT_FALSE(checkable(plan));
  EXPECT_THROW(deserialize_plan(serialize_plan(plan)), Error);
}

TEST_F(PersistentCacheInProcess, ForgedEntriesWithRecomputedChecksumsAreCountedMisses) {
  // A row group over rows of 5: the forged row below is the one once taken as a hit.
  step(0.5f);
  wait_device_ops();
  const fs::path entry = only_entry(dir_.path());
  ASSERT_FALSE(entry.empty());
  auto row_group = [](Plan& p) -> FusionGroup& {
    for (FusionGroup& g : p.groups)
      if (g.reduced_from >= 0 && g.members.size() > 1) return g;
    ADD_FAILURE() << "no row group";
    return p.groups.at(0);
  };
  const std::vector<std::pair<std::string, std::function<void(Plan&)>>> forgeries = {
      {"a longer row", [&](Plan& p) { row_group(p).row = 16645921; }},
      {"a larger group shape", [&](Plan& p) { row_group(p).shape[0] *= 1000; }},
      {"an extent of INT64_MAX", [](Plan& p) { p.nodes.back().meta.shape = Shape{std::numeric_limits<std::int64_t>::max()}; }},
      {"edges out of order", [](Plan& p) { p.inputs.offsets[1] = static_cast<int>(p.inputs.flat.size()) + 64; }},
      {"the steps reversed", [](Plan& p) { std::reverse(p.steps.begin(), p.steps.end()); }},
      {"a root in the arena", [](Plan& p) {
         p.arena_offset[static_cast<std::size_t>(p.roots[0])] = 0;
         p.stats.arena_bytes += 4096;
       }},
  };
  for (const auto& [what, forge] : forgeries) {
    plan_cache().clear();
    step(0.5f);  // rewrites a sound entry
    wait_device_ops();
    forge_entry(entry, forge);
    plan_cache().clear();
    std::int64_t bad = metrics::counter("PersistentCacheDeserializeFailure"), hits = metrics::counter("PersistentCacheHit");
    EXPECT_EQ(step(1.25f), expected(1.25f)) << what;
    EXPECT_EQ(metrics::counter("PersistentCacheDeserializeFailure"), bad + 1) << what;
    EXPECT_EQ(metrics::counter("PersistentCacheHit"), hits) << what;
    wait_device_ops();
  }
}

TEST_F(PersistentCacheInProcess, AnythingButAFilePlantedAsAnEntryIsABadEntry) {
  step(0.5f);
  wait_device_ops();
  const fs::path entry = only_entry(dir_.path());
  ASSERT_FALSE(entry.empty());
  auto expect_bad = [&](const std::string& what) {
    plan_cache().clear();
    std::int64_t bad = metrics::counter("PersistentCacheDeserializeFailure");
    EXPECT_EQ(step(2.5f), expected(2.5f)) << what;  // a FIFO read would block here
    EXPECT_EQ(metrics::counter("PersistentCacheDeserializeFailure"), bad + 1) << what;
    wait_device_ops();
  };
  fs::remove(entry);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0644), 0);
  detail::persistent_cache().open(dir_.path(), /*readonly=*/true);  // nothing replaces it
  expect_bad("a FIFO");
  fs::remove(entry);
  fs::create_symlink("/dev/zero", entry);
  expect_bad("a link to /dev/zero");
}

TEST(PersistentCache, StaleTemporaryFilesAreRemovedWhenTheDirectoryIsOpened) {
  TempDir dir;
  const fs::path stale = dir.path() / "0123456789abcdef-0123456789abcdef.ltplan.tmp.4242.00000000deadbeef";
  const fs::path fresh = dir.path() / "0123456789abcdef-0123456789abcdef.ltplan.tmp.4343.00000000deadbeef";
  const fs::path other = dir.path() / "notes.txt";
  for (const fs::path& p : {stale, fresh, other}) std::ofstream(p) << "x";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(1));
  fs::last_write_time(other, fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(detail::PersistentCache::remove_stale_temporaries(dir.path()), 1u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)) << "a live writer's file";
  EXPECT_TRUE(fs::exists(other));
}

TEST_F(PersistentCacheInProcess, AnUnwritableDirectoryDegradesToNoStoring) {
  detail::persistent_cache().close();
  fs::path missing = dir_.path() / "no" / "such";
  initialize_cache(missing.string(), /*readonly=*/true);  // warns, caches nothing
  EXPECT_EQ(step(1.0f), expected(1.0f));
  EXPECT_FALSE(fs::exists(missing));
  // A directory that exists but takes no files, even from root: the step runs, one warning.
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  initialize_cache("/proc/self");
  plan_cache().clear();
  testing::internal::CaptureStderr();
  EXPECT_EQ(step(3.0f), expected(3.0f));
  wait_device_ops();
  plan_cache().clear();
  EXPECT_EQ(step(4.0f), expected(4.0f));
  wait_device_ops();
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("cannot write to plan cache directory"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("cannot write"), warnings.rfind("cannot write")) << "warned more than once: " << warnings;
}

/// Starts a probe that writes graph after graph into `dir`, from size `first`, and returns once
/// it has opened the cache: kill points are drawn from its writing, not from its start-up, whose
/// length depends on the machine and the build.
pid_t start_writer(const fs::path& dir, std::int64_t first) {
  std::string dir_arg = dir.string(), first_arg = std::to_string(first);
  std::vector<char*> argv{const_cast<char*>(LAZYTENSOR_CACHE_PROBE), const_cast<char*>("write"), dir_arg.data(),
                          first_arg.data(), nullptr};
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, LAZYTENSOR_CACHE_PROBE, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ready[1]);
  char line[8];
  EXPECT_GT(::read(ready[0], line, sizeof line), 0) << "the writer ended before it opened the cache";
  ::close(ready[0]);
  return pid;
}
void kill_writer(pid_t pid) {
  ASSERT_GT(pid, 0) << "no writer was started";  // kill(0) would signal this whole process group
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
}
std::size_t entries_in(const fs::path& dir) {
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.path().extension() == ".ltplan";
  return entries;
}

TEST(PersistentCache, WritersKilledAtRandomPointsNeverLeaveAnEntryThatLoadsWrong) {
  TempDir dir;
  std::mt19937 rng(99);
  std::int64_t first = 1;
  // The first writer lives until it has stored an entry, however slow the machine: the check
  // below then always has entries to load.
  pid_t pid = start_writer(dir.path(), first);
  for (int waited_ms = 0; entries_in(dir.path()) == 0 && waited_ms < 600'000; waited_ms += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill_writer(pid);
  ASSERT_GT(entries_in(dir.path()), 0u) << "a writer stored nothing in ten minutes";
  // LT_TEST_WRITER_KILLS: more kills for a longer run (50 by default).
  const int kills = static_cast<int>(detail::env_count("LT_TEST_WRITER_KILLS", 50));
  for (int k = 0; k < kills; ++k) {
    first += 3;  // overlapping ranges: writers replace each other's entries too
    // Two writers at a time now and then: they replace each other's entries as they go.
    const bool pair = k % 5 == 4;
    pid = start_writer(dir.path(), first);
    pid_t other = pair ? start_writer(dir.path(), first + 1) : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 80));
    kill_writer(pid);
    if (pair) kill_writer(other);
  }
  EXPECT_GT(entries_in(dir.path()), 0u);
  ProbeCounts v = run_probe("verify " + dir.path().string() + " " + std::to_string(first + 40));
  EXPECT_EQ(v.wrong, 0);
  EXPECT_EQ(v.bad, 0) << "a killed writer left a torn entry";
  EXPECT_GT(v.hit, 0);
}

}  // namespace
}  // namespace lt
