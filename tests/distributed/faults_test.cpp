// Faults among replicas: calls that disagree, a replica that throws, one that never comes.
// Each raises lt::Error on every waiting replica, nothing hangs, and the next launch works.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "replica_harness.hpp"

namespace lt::test {
namespace {

/// Runs `fn` on `replicas` replicas; returns launch's error message and each replica's own.
struct Outcome {
  std::string raised;
  std::vector<std::string> seen;
};
Outcome run_failing(int replicas, const std::function<void(int)>& fn) {
  Outcome o;
  o.seen.resize(static_cast<std::size_t>(replicas));
  std::mutex mu;
  try {
    launch([&](int ordinal) {
      try {
        fn(ordinal);
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        o.seen[static_cast<std::size_t>(ordinal)] = e.what();
        throw;
      }
    }, {.replicas = replicas});
  } catch (const std::exception& e) {
    o.raised = e.what();
  }
  return o;
}

/// A healthy launch after a fault: the group and the devices are usable again.
void expect_launch_works() {
  PerReplica got(2);
  launch([&](int ordinal) {
    Tensor t = all_reduce(ReduceOp::sum, full({3}, ordinal + 1.0, device()));
    got.set(ordinal, t.to_vector<double>());
  }, {.replicas = 2});
  EXPECT_EQ(got.values[0], (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(got.values[1], got.values[0]);
}

TEST(ReplicaFaults, ShapesThatDifferRaiseOnEveryReplica) {
  Outcome o = run_failing(3, [](int ordinal) {
    Tensor t = all_reduce(ReduceOp::sum, zeros({ordinal == 2 ? 4 : 3}, device()));
    (void)t.to_vector<float>();
  });
  for (const std::string& s : o.seen) {
    EXPECT_NE(s.find("all_reduce"), std::string::npos) << s;
    EXPECT_NE(s.find("disagree"), std::string::npos) << s;
    EXPECT_NE(s.find("replica 2 has all_reduce sum f32[4]"), std::string::npos) << s;
  }
  EXPECT_NE(o.raised.find("disagree"), std::string::npos) << o.raised;
  expect_launch_works();
}

TEST(ReplicaFaults, DtypesThatDifferRaise) {
  Outcome o = run_failing(2, [](int ordinal) {
    Tensor t = all_gather(zeros({2}, device()).to(ordinal == 0 ? DType::f32 : DType::f64));
    (void)t.to_vector<double>();
  });
  EXPECT_NE(o.raised.find("all_gather"), std::string::npos) << o.raised;
  EXPECT_NE(o.raised.find("f64"), std::string::npos) << o.raised;
  expect_launch_works();
}

TEST(ReplicaFaults, RendezvousTagsThatDifferRaise) {
  Outcome o = run_failing(2, [](int ordinal) { rendezvous(ordinal == 0 ? "epoch" : "eval"); });
  for (const std::string& s : o.seen) EXPECT_NE(s.find("rendezvous 'eval'"), std::string::npos) << s;
  expect_launch_works();
}

TEST(ReplicaFaults, AReplicaThatThrowsReleasesTheOthers) {
  Outcome o = run_failing(3, [](int ordinal) {
    if (ordinal == 1) throw std::runtime_error("bad batch");
    Tensor t = all_reduce(ReduceOp::sum, ones({5}, device()));
    (void)t.to_vector<float>();
  });
  EXPECT_EQ(o.raised, "bad batch");  // launch rethrows the replica's own error
  for (int r : {0, 2}) EXPECT_NE(o.seen[r].find("replica 1 failed: bad batch"), std::string::npos) << o.seen[r];
  expect_launch_works();
}

TEST(ReplicaFaults, AReplicaThatNeverComesTimesOut) {
  ASSERT_EQ(setenv("LT_COLLECTIVE_TIMEOUT", "1", 1), 0);
  Outcome o = run_failing(2, [](int ordinal) {
    if (ordinal == 1) return;  // leaves without its collective
    Tensor t = all_reduce(ReduceOp::max, ones({5}, device()));
    (void)t.to_vector<float>();
  });
  unsetenv("LT_COLLECTIVE_TIMEOUT");
  EXPECT_NE(o.seen[0].find("replica 1 did not arrive within 1 s"), std::string::npos) << o.seen[0];
  EXPECT_EQ(o.raised, o.seen[0]);
  expect_launch_works();
}

TEST(ReplicaFaults, BadArgumentsRaiseAtTraceTime) {
  launch([](int) {
    EXPECT_THROW(reduce_scatter(ReduceOp::sum, zeros({3}, device())), Error);  // 3 into 2 shards
    EXPECT_THROW(broadcast(zeros({3}, device()), 2), Error);                    // no ordinal 2
    EXPECT_THROW(all_reduce(ReduceOp::sum, zeros({3}, device()).to(DType::boolean)), Error);
    EXPECT_THROW(all_gather(zeros({}, device())), Error);
    EXPECT_THROW(all_reduce(ReduceOp::mean, zeros({3}, device()).to(DType::i32)), Error);
  }, {.replicas = 2});
  EXPECT_THROW(launch([](int) {}, {.replicas = 0}), Error);
  EXPECT_THROW(launch([](int) { launch([](int) {}); }, {.replicas = 1}), Error);  // no nesting
  expect_launch_works();
}

}  // namespace
}  // namespace lt::test
