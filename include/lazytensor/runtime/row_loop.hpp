#pragma once
// Runs a fusion group (no product) as one loop over small tiles of whole rows, calling each
// member's bound kernel (BoundKernel) on raw runs of values: no views, operands or allocation
// per tile, so a tile can be small enough that every value the members pass on stays in L1.
// A bound kernel computes what its op's kernel computes, so the results equal the reference
// executor's bit for bit. A group with a member that has no bound form for its operands runs
// through the view-based loop instead (plan_executor.hpp).
// The parts: runs of raw values (value_runs.hpp), the class (row_loop_class.hpp), its binding
// (row_loop_bind.hpp), bf16 ops run in one pass (row_loop_fuse.hpp) and its run (row_loop_run.hpp).
#include "lazytensor/runtime/row_loop_bind.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"
#include "lazytensor/runtime/row_loop_fuse.hpp"
#include "lazytensor/runtime/row_loop_run.hpp"
#include "lazytensor/runtime/value_runs.hpp"
