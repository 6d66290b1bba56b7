#pragma once
// The profiler: where a program's steps spend their time, written as a Chrome trace event file
// (JSON; open it in https://ui.perfetto.dev or chrome://tracing). Each host thread has a track
// of its barriers, user scopes, transfers and data-loader waits; each lazy device has a track
// of the steps it ran (compile, execute, and inside execute every fusion group or kernel with
// its ops, shapes, bytes and FLOPs), a track of the tracing between its barriers, and counters
// of arena bytes and pending tensors. An arrow leads from each barrier to the step it queued.
// Off, it costs a relaxed load at each barrier, step and kernel; nothing per traced op.
#include <cstddef>
#include <string>
#include <string_view>

#include "lazytensor/runtime/profiler_events.hpp"

namespace lt::profiler {

/// Starts recording, to be written to `path` (a Chrome trace event JSON file) by stop().
/// LT_PROFILE=path profiles a whole program from its start to its exit. Raises lt::Error when a
/// recording is under way already.
void start(const std::string& path);

/// Waits for the queued steps, ends the recording and writes its file (lt::Error if it cannot
/// be written). Nothing happens when no recording is under way.
void stop();

/// Whether a recording is under way.
inline bool active() { return detail::on(); }

/// The kernels of the latest recording (the one under way, else the last stopped), slowest in
/// total first: calls, total and mean time, and the GB/s and GFLOP/s each achieved. At most
/// `top` rows.
std::string summary(std::size_t top = 15);

/// Records from construction to destruction: start(path), then stop().
class Recording {
 public:
  /// Starts recording into the Chrome trace file `path`.
  explicit Recording(const std::string& path) { start(path); }
  ~Recording() { stop(); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
};

/// A user span on this thread's track, from here to the end of the enclosing block:
///   auto forward = lt::profiler::scope("forward");
[[nodiscard]] inline detail::Span scope(std::string_view name) { return detail::Span(name, "user"); }

}  // namespace lt::profiler
