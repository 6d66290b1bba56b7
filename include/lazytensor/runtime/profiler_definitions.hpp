#pragma once
// The profiler (runtime/profiler.hpp), defined: included once per program, by the
// implementation (lazytensor/implementation.hpp), never by a file of its own. Each thread
// appends to a log of its own; stop() gathers the logs and writes the Chrome trace event
// format with nlohmann-json.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lazytensor/core/env.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/runtime/profiler.hpp"
#include "lazytensor/runtime/step_queue.hpp"

namespace lt::profiler::detail {

struct Event {
  char phase = 'X';  // X: a span; C: a counter; s, f: the ends of a flow arrow
  SpanRecord span;   // for a counter or flow: name, category, start_ns, track
  int host_thread = 0;
  double value = 0;        // a counter's
  std::uint64_t flow = 0;  // a flow's id
};

/// A span's name, category and arguments, its own or its shared note's.
inline const std::string& name_of(const SpanRecord& s) { return s.note ? s.note->name : s.name; }
inline const char* category_of(const SpanRecord& s) { return s.note ? s.note->category : s.category; }
inline const std::vector<Arg>& args_of(const SpanRecord& s) { return s.note ? s.note->args : s.args; }

struct ThreadLog {
  std::mutex mu;
  std::deque<Event> events;  // guarded by mu; a deque grows without moving what it holds
  int host_thread = 0;        // numbered from 1 in order of first record
};

/// How many events a recording kept at most, and how many it dropped past that.
struct Limit {
  std::uint64_t max_events = 0;  // 0: no limit
  std::uint64_t dropped = 0;
};

struct Logs {
  std::mutex mu;
  std::vector<std::shared_ptr<ThreadLog>> threads;  // guarded by mu; kept after a thread ends
  std::string path;                                 // the recording under way's
  std::int64_t origin_ns = 0;
  std::vector<Event> last;  // the last stopped recording's events, for summary()
  Limit last_limit;         // and its limit
};
inline Logs& logs() {
  static Logs l;
  return l;
}

inline ThreadLog& this_thread_log() {
  thread_local std::shared_ptr<ThreadLog> log = [] {
    auto made = std::make_shared<ThreadLog>();
    Logs& l = logs();
    std::lock_guard lock(l.mu);
    l.threads.push_back(made);
    made->host_thread = static_cast<int>(l.threads.size());
    return made;
  }();
  return *log;
}

inline void append(Event&& e) {
  ThreadLog& log = this_thread_log();
  e.host_thread = log.host_thread;
  std::lock_guard lock(log.mu);
  log.events.push_back(std::move(e));
}

void record_span(SpanRecord&& span) {
  if (!on()) return;  // ended after stop(): its recording is written already
  append(Event{'X', std::move(span), 0, 0, 0});
}

void record_counter(int device, const char* name, double value) {
  if (!on() || !take_slot()) return;
  append(Event{'C', SpanRecord{name, "counter", now_ns(), 0, device_steps(device), {}, nullptr}, 0, value, 0});
}

bool record_flow(std::uint64_t id, bool starts, Track track, std::int64_t at_ns) {
  if (!on() || (starts && !take_slot())) return false;  // an end always has its start's slot
  append(Event{starts ? 's' : 'f', SpanRecord{"step", "step", at_ns, 0, track, {}, nullptr}, 0, 0, id});
  return true;
}

/// The limit of the recording under way and what it dropped so far.
inline Limit current_limit() { return {max_events.load(std::memory_order_relaxed), dropped_so_far()}; }

/// Takes every thread's events, oldest first.
inline std::vector<Event> take_events() {
  std::vector<Event> all;
  Logs& l = logs();
  std::lock_guard lock(l.mu);
  for (const auto& t : l.threads) {
    std::lock_guard tl(t->mu);
    std::move(t->events.begin(), t->events.end(), std::back_inserter(all));
    t->events.clear();
  }
  std::stable_sort(all.begin(), all.end(), [](const Event& a, const Event& b) { return a.span.start_ns < b.span.start_ns; });
  return all;
}

// Process ids: the host's threads under one, each lazy device under its own.
inline constexpr int host_pid = 1;
inline int device_pid(int device) { return 100 + device; }
inline constexpr int steps_tid = 1, tracing_tid = 2;

inline nlohmann::json place(const Event& e) {
  nlohmann::json j;
  const Track& t = e.span.track;
  if (t.kind == Track::thread) {
    j["pid"] = host_pid;
    j["tid"] = e.host_thread;
  } else {
    j["pid"] = device_pid(t.device);
    j["tid"] = t.kind == Track::device_steps ? steps_tid : tracing_tid;
  }
  return j;
}

inline nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

inline nlohmann::json trace_json(const std::vector<Event>& events, std::int64_t origin_ns, const Limit& limit) {
  auto micros = [&](std::int64_t ns) { return static_cast<double>(ns - origin_ns) * 1e-3; };
  nlohmann::json list = nlohmann::json::array();
  std::set<int> host_threads, devices;
  for (const Event& e : events) {
    nlohmann::json j = place(e);
    if (e.span.track.kind == Track::thread) host_threads.insert(e.host_thread);
    else devices.insert(e.span.track.device);
    j["ph"] = std::string(1, e.phase);
    j["name"] = name_of(e.span);
    j["ts"] = micros(e.span.start_ns);
    switch (e.phase) {
      case 'X': {
        j["cat"] = category_of(e.span);
        j["dur"] = static_cast<double>(e.span.end_ns - e.span.start_ns) * 1e-3;
        nlohmann::json args = nlohmann::json::object();
        for (const Arg& a : args_of(e.span)) {
          if (a.is_number) args[a.key] = a.number;
          else args[a.key] = a.text;
        }
        j["args"] = std::move(args);
        break;
      }
      case 'C':
        j["args"] = {{e.span.name, e.value}};
        break;
      default:  // a flow: its end binds to the span that encloses it
        j["cat"] = e.span.category;
        j["id"] = e.flow;
        if (e.phase == 'f') j["bp"] = "e";
        break;
    }
    list.push_back(std::move(j));
  }
  list.push_back(metadata("process_name", host_pid, 0, "host"));
  for (int t : host_threads) list.push_back(metadata("thread_name", host_pid, t, "thread " + std::to_string(t)));
  for (int d : devices) {
    list.push_back(metadata("process_name", device_pid(d), 0, "lazy:" + std::to_string(d)));
    list.push_back(metadata("thread_name", device_pid(d), steps_tid, "steps"));
    list.push_back(metadata("thread_name", device_pid(d), tracing_tid, "tracing"));
  }
  // The format's place for metadata: a viewer shows it beside the trace.
  nlohmann::json other = {{"max_events", limit.max_events}, {"dropped_events", limit.dropped}};
  return {{"traceEvents", std::move(list)}, {"displayTimeUnit", "ms"}, {"otherData", std::move(other)}};
}

/// Ends the recording and writes its file; `wait`: first let the queued steps finish, so that
/// they are in it (not at exit, when the workers are gone).
inline void finish(bool wait) {
  Logs& l = logs();
  if (!on()) return;
  if (wait) lt::detail::wait_all_steps();
  recording.store(false, std::memory_order_relaxed);
  const Limit limit = current_limit();
  std::vector<Event> events = take_events();
  std::string path;
  std::int64_t origin = 0;
  {
    std::lock_guard lock(l.mu);
    path = std::move(l.path);
    origin = l.origin_ns;
  }
  const std::string text = trace_json(events, origin, limit).dump();
  {
    std::lock_guard lock(l.mu);
    l.last = std::move(events);
    l.last_limit = limit;
  }
  if (limit.dropped > 0)
    std::fprintf(stderr, "lazytensor: profiler: the trace %s kept its first %llu events and dropped %llu"
                 " (LT_PROFILE_MAX_EVENTS)\n", path.c_str(), static_cast<unsigned long long>(limit.max_events),
                 static_cast<unsigned long long>(limit.dropped));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  LT_CHECK(out.good(), "profiler: cannot write the trace to ", path);
}

/// LT_PROFILE=path: the whole program is recorded, and written when it exits.
struct RecordFromEnvironment {
  RecordFromEnvironment() {
    logs();  // made first, so that it outlives this object
    if (const char* path = std::getenv("LT_PROFILE"); path != nullptr && *path != 0) start(path);
  }
  ~RecordFromEnvironment() {
    try {
      finish(false);  // the main thread's end waited for its steps already
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lazytensor: %s\n", e.what());
    }
  }
};
RecordFromEnvironment record_from_environment;

}  // namespace lt::profiler::detail

namespace lt::profiler {

std::size_t default_max_events() {
  static const std::size_t n = static_cast<std::size_t>(lt::detail::env_count("LT_PROFILE_MAX_EVENTS", 250'000));
  return n;
}

void start(const std::string& path, std::size_t max_events) {
  detail::Logs& l = detail::logs();
  std::lock_guard lock(l.mu);
  LT_CHECK(!detail::on(), "profiler: a recording is under way already (to ", l.path, ")");
  LT_CHECK(!path.empty(), "profiler: the trace needs a file name");
  for (const auto& t : l.threads) {
    std::lock_guard tl(t->mu);
    t->events.clear();  // records that ended after the last stop
  }
  l.path = path;
  l.origin_ns = detail::now_ns();
  detail::max_events.store(max_events, std::memory_order_relaxed);
  detail::events_asked.store(0, std::memory_order_relaxed);
  detail::recording.store(true, std::memory_order_relaxed);
}

void stop() { detail::finish(true); }

}  // namespace lt::profiler
