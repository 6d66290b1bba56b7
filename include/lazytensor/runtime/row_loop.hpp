#pragma once
// Runs a fusion group as one loop over small tiles, calling each member's bound kernel
// (BoundKernel) on raw runs of values: no views, operands or allocation per tile, so a tile can
// be small enough that every value the members pass on stays in L1. A group's tiles are blocks
// of whole rows, or in a group led by a tiled product, runs of the product's tiles as it makes
// them (row_loop_sources.hpp). A member with no bound form for its operands runs its op's kernel
// on views of each tile. Either computes what its op's kernel computes alone, so the results
// equal the reference executor's bit for bit.
// The parts: runs of raw values (value_runs.hpp), the class (row_loop_class.hpp), its binding
// (row_loop_bind.hpp), bf16 ops run in one pass (row_loop_fuse.hpp), its run (row_loop_run.hpp)
// and its product source (row_loop_sources.hpp).
#include "lazytensor/runtime/row_loop_bind.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"
#include "lazytensor/runtime/row_loop_fuse.hpp"
#include "lazytensor/runtime/row_loop_sources.hpp"
#include "lazytensor/runtime/row_loop_run.hpp"
#include "lazytensor/runtime/value_runs.hpp"
