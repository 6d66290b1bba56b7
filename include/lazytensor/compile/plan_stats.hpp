#pragma once
// What a plan does, in counts: apart from the plan types, so that the runtime's API
// (debug::plan_stats) can return it without pulling the compile layer into every user file.
#include <cstdint>

namespace lt {

/// What a plan does, for tests and metrics.
struct PlanStats {
  int kernels = 0;        // kernel launches per run: groups and nodes run alone, views aside
  int views = 0;          // view ops run alone: aliases of their input (a copy only where its layout forbids)
  int fused_groups = 0;   // groups of two or more ops
  int fused_ops = 0;      // ops inside those groups (constants not counted)
  int row_groups = 0;     // groups holding a reduction with its producers and consumers
  int gemm_epilogues = 0; // groups led by a product, running elementwise ops on its tiles
  std::int64_t intermediate_bytes = 0;  // values made in full (not views) and consumed within the step
  std::int64_t arena_bytes = 0;  // the one block those values share, placed by their lives
};

}  // namespace lt
