// A process saving checkpoints in a loop is killed with SIGKILL at random moments; every load
// after a kill must give a whole generation, the one before the kill or a later one.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <iostream>
#include <random>
#include <thread>

#include "io_test_support.hpp"

extern char** environ;

namespace lt::io::testing {
namespace {

constexpr int kills = 200;

/// The generation of the file at `path`, checked whole: every element of every tensor and the
/// metadata agree. Returns -1 for a file that is not one whole generation.
long whole_generation(const std::string& path) {
  SafetensorsContents file = load_with_metadata(path);
  long g = std::stol(file.metadata.at("generation"));
  if (file.tensors.at("generation").item<std::int64_t>() != g) return -1;
  for (float v : file.tensors.at("a").to_vector<float>())
    if (v != static_cast<float>(g)) return -1;
  for (std::int64_t v : file.tensors.at("b").to_vector<std::int64_t>())
    if (v != g) return -1;
  return g;
}

TEST(KillDuringSave, EveryLoadGivesTheOldOrANewCheckpoint) {
  ScratchDir dir;
  const std::string path = dir / "run.safetensors";
  save({{"a", full({256, 1024}, 0.0, cpu, f32)}, {"b", full({100'000}, 0, cpu, i64)},
        {"generation", full({}, 0, cpu, i64)}},
       path, {{"generation", "0"}});
  std::mt19937 random(std::random_device{}());
  long last = 0;
  int corrupt = 0, unchanged = 0, advanced = 0;
  for (int k = 0; k < kills; ++k) {
    std::string first = std::to_string(last + 1);
    char* argv[] = {const_cast<char*>(LT_IO_SAVE_LOOP), const_cast<char*>(path.c_str()), first.data(), nullptr};
    pid_t child = 0;
    ASSERT_EQ(posix_spawn(&child, LT_IO_SAVE_LOOP, nullptr, nullptr, argv, environ), 0);
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 60'000)(random)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the saver stopped by itself (status " << status << ") at kill " << k;
    long g = -1;
    try {
      g = whole_generation(path);
    } catch (const Error& e) {
      ADD_FAILURE() << "kill " << k << ": " << e.what();
    }
    if (g < last) {
      ++corrupt;
      ADD_FAILURE() << "kill " << k << ": generation " << g << " after " << last;
      continue;
    }
    (g == last ? unchanged : advanced) += 1;
    last = g;
    // A killed saver leaves its temporary file beside the target: clear them.
    for (auto& entry : std::filesystem::directory_iterator(dir.path()))
      if (entry.path().filename().string().starts_with("run.safetensors.tmp.")) std::filesystem::remove(entry.path());
  }
  std::cout << kills << " kills: " << corrupt << " corrupt loads, " << unchanged << " found the old checkpoint, "
            << advanced << " a newer one (last generation " << last << ")\n";
  EXPECT_EQ(corrupt, 0);
  EXPECT_GT(advanced, 0);  // the saver did get to write between kills
}

}  // namespace
}  // namespace lt::io::testing
