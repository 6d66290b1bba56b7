#pragma once
// What a program calls of the runtime: the barrier, waiting, reading values. Declared here and
// defined once per program, in the implementation (runtime/definitions.hpp), so that a file
// using lazy tensors compiles none of the scheduler or the executor.
#include <string>
#include <vector>

#include "lazytensor/compile/plan_stats.hpp"
#include "lazytensor/core/array.hpp"
#include "lazytensor/core/device.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt {

/// The barrier of lazy device `dev`. It takes the device's pending tensors, rebinds each to a
/// leaf whose value is still to come, queues their graph as one step on the device's worker
/// and returns: tracing the next step overlaps running this one. A small step with a cached
/// plan runs here instead (see LT_SMALL_STEP_ELEMENTS). A device runs one step at a time, so
/// a barrier first waits for the step before it, and raises that step's error if it failed
/// and nothing raised it yet (then it takes nothing: pending tensors stay pending). Nothing to
/// run is not an error. With LT_ASYNC=0 the step runs here and raises at once.
void sync(Device dev = device());

/// Alias of sync(), PyTorch/XLA's name.
inline void mark_step(Device dev = device()) { sync(dev); }

/// Waits until every queued step of every lazy device has finished, then raises the error of
/// a failed step that no barrier or read has raised yet.
void wait_device_ops();

/// The value of `t`, waiting for the step that computes it, or computing here what it still
/// needs (not a barrier: other pending tensors stay pending).
Array materialize(const Tensor& t);

/// Keeps compiled plans in `path` as well, for later runs and other processes: a graph missing
/// from the in-memory cache is looked up there before it compiles, and every compiled plan is
/// stored there (unless `readonly`). Counters: PersistentCacheHit, PersistentCacheMiss,
/// PersistentCacheDeserializeFailure.
void initialize_cache(const std::string& path, bool readonly = false);

namespace debug {
/// Work out why each uncached compile happens (also on with LT_DEBUG=1, which prints it).
void explain_compiles(bool on = true);
/// Why the latest explained compile happened; empty when none was explained yet.
std::string last_compile_reason();
/// What the barrier would run for `tensors`' pending graph: kernels, fused groups and the bytes
/// of full-size intermediates. Runs nothing.
PlanStats plan_stats(const std::vector<Tensor>& tensors);
}  // namespace debug

namespace detail {
/// The value of `t` as a contiguous array of dtype `as`, counting a read from a lazy device.
Array read_contiguous(const Tensor& t, DType as);
/// Scopes of lt::expect_cached open on this thread.
inline thread_local int expect_cached_depth = 0;
}  // namespace detail

}  // namespace lt
