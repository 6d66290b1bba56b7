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

/// The most events a recording keeps unless told otherwise: LT_PROFILE_MAX_EVENTS, else
/// 250,000 (a trace of about 40 MB: an event takes some 160 bytes of JSON); 0: no limit.
std::size_t default_max_events();

/// Starts recording, to be written to `path` (a Chrome trace event JSON file) by stop().
/// LT_PROFILE=path profiles a whole program from its start to its exit. Raises lt::Error when a
/// recording is under way already. The recording keeps its first `max_events` events (0: all)
/// and drops later ones: the file's "otherData" says how many, and summary() that it is partial.
void start(const std::string& path, std::size_t max_events = default_max_events());

/// Waits for the queued steps, ends the recording and writes its file (lt::Error if it cannot
/// be written). Nothing happens when no recording is under way.
void stop();

/// Whether a recording is under way.
inline bool active() { return detail::on(); }

/// The kernels of the latest recording (the one under way, else the last stopped), slowest in
/// total first: calls, total and mean time, and the GB/s and GFLOP/s each achieved. At most
/// `top` rows. A recording that dropped events past its limit says so: its table counts the
/// kernels of the events it kept.
std::string summary(std::size_t top = 15);

/// Records from construction to destruction: start(path), then stop().
class Recording {
 public:
  /// Starts recording into the Chrome trace file `path`.
  explicit Recording(const std::string& path, std::size_t max_events = default_max_events()) {
    start(path, max_events);
  }
  ~Recording() { stop(); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
};

/// A user span on this thread's track, from here to the end of the enclosing block:
///   auto forward = lt::profiler::scope("forward");
[[nodiscard]] inline detail::Span scope(std::string_view name) { return detail::Span(name, "user"); }

}  // namespace lt::profiler
