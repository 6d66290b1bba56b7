#pragma once
// What the runtime records for the profiler (runtime/profiler.hpp): spans, counters and the
// flow from a barrier to its step. Every record is behind on(), one relaxed load: building a
// span's name and arguments happens only while a recording is under way. The records are kept
// and written by the implementation (runtime/profiler_definitions.hpp).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lt::profiler::detail {

inline std::atomic<bool> recording{false};
inline bool on() { return recording.load(std::memory_order_relaxed); }

// A recording keeps at most max_events events (0: no limit) and drops the rest, counted: a
// long program's trace stays a file a viewer opens. Each event takes its slot where it begins,
// so a span whose start was kept is kept whole, and an arrow's end goes with its start.
inline std::atomic<std::uint64_t> max_events{0};
inline std::atomic<std::uint64_t> events_asked{0};  // slots asked for in the recording under way

/// A slot for one more event of the recording under way; false once it is full (the event
/// is dropped, and counted).
inline bool take_slot() {
  const std::uint64_t cap = max_events.load(std::memory_order_relaxed);
  return events_asked.fetch_add(1, std::memory_order_relaxed) < cap || cap == 0;
}
/// The events the recording under way has dropped so far.
inline std::uint64_t dropped_so_far() {
  const std::uint64_t cap = max_events.load(std::memory_order_relaxed);
  const std::uint64_t asked = events_asked.load(std::memory_order_relaxed);
  return cap != 0 && asked > cap ? asked - cap : 0;
}

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Where an event is drawn: the calling thread's track, or one of lazy device `device`'s.
struct Track {
  enum Kind : std::uint8_t { thread, device_steps, device_tracing };
  Kind kind = thread;
  int device = -1;
};
inline Track device_steps(int device) { return {Track::device_steps, device}; }
inline Track device_tracing(int device) { return {Track::device_tracing, device}; }

/// A span's argument: a number, or else text.
struct Arg {
  std::string key;
  std::string text;
  double number = 0;
  bool is_number = false;
};

/// A name, category and arguments made once and shared by many spans: a plan's kernel is the
/// same kernel at every run, and building its description at each would cost more than the
/// record itself.
struct SpanNote {
  std::string name;
  const char* category = "";
  std::vector<Arg> args;
};

struct SpanRecord {
  std::string name;
  const char* category = "";
  std::int64_t start_ns = 0, end_ns = 0;
  Track track;
  std::vector<Arg> args;
  std::shared_ptr<const SpanNote> note;  // where set, the name, category and arguments
};

/// Appends a span whose slot was taken (take_slot) when it began.
void record_span(SpanRecord&& span);
/// Counter `name` of lazy device `device` reads `value` from now on (unless the recording is full).
void record_counter(int device, const char* name, double value);
/// One end of the arrow `id`: its start on this thread's track (inside the barrier that queues a
/// step), its end on the device's step track (where the step's execute span starts). A start
/// returns false when the recording is full and drops it: record no end for it then.
bool record_flow(std::uint64_t id, bool starts, Track track, std::int64_t at_ns);

inline std::uint64_t next_flow_id() {
  static std::atomic<std::uint64_t> n{0};
  return n.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// A span from construction to destruction, recorded only when a recording was under way at
/// its start and had room for it.
class Span {
 public:
  Span(std::string_view name, const char* category, Track track = {}) {
    if (!on() || !take_slot()) return;
    record_.emplace(SpanRecord{std::string(name), category, now_ns(), 0, track, {}, nullptr});
  }
  ~Span() { end(); }
  Span(Span&& other) noexcept : record_(std::move(other.record_)) { other.record_.reset(); }
  Span& operator=(Span&&) = delete;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  /// Whether this span is recorded: build arguments only then.
  bool live() const { return record_.has_value(); }
  std::int64_t start_ns() const { return record_ ? record_->start_ns : 0; }
  /// Takes its name, category and arguments from `note`.
  void share(std::shared_ptr<const SpanNote> note) {
    if (record_) record_->note = std::move(note);
  }
  Span& arg(std::string key, double value) {
    if (record_) record_->args.push_back(Arg{std::move(key), {}, value, true});
    return *this;
  }
  Span& arg(std::string key, std::string text) {
    if (record_) record_->args.push_back(Arg{std::move(key), std::move(text), 0, false});
    return *this;
  }
  /// Ends the span now (else at destruction).
  void end() {
    if (!record_) return;
    record_->end_ns = now_ns();
    record_span(std::move(*record_));
    record_.reset();
  }

 private:
  std::optional<SpanRecord> record_;
};

}  // namespace lt::profiler::detail
