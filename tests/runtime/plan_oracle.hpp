#pragma once
// The oracle the plan tests share: a pending graph run by its plan and by the reference
// executor, compared bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

#include "same_bits.hpp"

namespace lt::oracle {

inline std::vector<NodePtr> roots_of(const std::vector<Tensor>& ts) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : ts) roots.push_back(t.impl().node);
  return roots;
}

/// Runs the results of `plan` on `schedule` and the reference executor on the same graph,
/// without cutting it, and expects the same bits. The plan read back from its bytes, as the
/// disk cache reads it, passes the loader's checks and is the same plan.
inline void expect_same_bits_as_reference(const Plan& plan, const Schedule& schedule, const std::vector<Tensor>& ts,
                                          const std::string& where) {
  std::vector<NodePtr> roots = roots_of(ts);
  std::vector<Array> fused = run_plan(plan, schedule), reference = run_reference(roots);
  EXPECT_EQ(fused.size(), reference.size());
  if (fused.size() != reference.size()) return;
  for (std::size_t k = 0; k < fused.size(); ++k)
    EXPECT_TRUE(same_bits(fused[k], reference[k])) << where << ": root " << k << "\n" << debug::ir_text(ts);
  Plan loaded;
  try {
    loaded = deserialize_plan(serialize_plan(plan));
  } catch (const Error& e) {
    ADD_FAILURE() << where << ": the loader refuses the compiled plan: " << e.what() << "\n" << debug::ir_text(ts);
    return;
  }
  EXPECT_EQ(first_difference(loaded, schedule), -1) << where;
  EXPECT_TRUE(serialize_plan(loaded) == serialize_plan(plan)) << where;
}

/// Plans the pending graph of `ts`, runs it both ways and compares bit for bit.
inline PlanStats expect_plan_matches_reference(const std::vector<Tensor>& ts, const std::string& where) {
  std::vector<NodePtr> roots = roots_of(ts);
  Schedule schedule = make_schedule(roots);
  Plan plan = make_plan(schedule);
  expect_same_bits_as_reference(plan, schedule, ts, where);
  return plan.stats;
}

}  // namespace lt::oracle
