// Saving among replicas: with master_only the master ordinal writes and every replica returns
// once the file is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include <lazytensor/io.hpp>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

TEST(ReplicaSave, MasterOnlyWritesTheMastersTensorsAndReleasesTheOthersAfter) {
  const std::string path = (std::filesystem::temp_directory_path() / ("lt_master_only_" + std::to_string(::getpid()) + ".safetensors")).string();
  std::filesystem::remove(path);
  PerReplica seen(3);
  launch([&](int ordinal) {
    TensorMap tensors{{"w", full({4}, ordinal + 1.0, device())}};
    save(tensors, path, {{"writer", std::to_string(ordinal)}}, {.master_only = true});
    // Every replica finds the file complete once save returns.
    SafetensorsContents back = load_with_metadata(path);
    std::vector<double> v = back.tensors.at("w").to_vector<double>();
    v.push_back(std::stod(back.metadata.at("writer")));
    seen.set(ordinal, v);
  }, {.replicas = 3});
  for (int r = 0; r < 3; ++r) EXPECT_EQ(seen.values[r], (std::vector<double>{1, 1, 1, 1, 0})) << "replica " << r;
  std::filesystem::remove(path);
}

TEST(ReplicaSave, AMasterThatCannotWriteReleasesTheOthers) {
  try {
    launch([&](int) {
      save({{"w", zeros({2}, device())}}, "/nonexistent-directory/x.safetensors", {}, {.master_only = true});
    }, {.replicas = 2});
    FAIL() << "the failed save did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nonexistent-directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lt::test
