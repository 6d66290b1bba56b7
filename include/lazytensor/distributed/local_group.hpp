#pragma once
// The replicas of one launch. Between the threads of this process a collective goes through
// shared memory: every replica posts its input and output, and once all have come each one
// reduces (or copies) its own share of the elements straight into every replica's output.
// Between processes, the first replica of each process takes the process's part through the
// process link. Every wait ends: when all have come, when a replica fails (abort), or after
// LT_COLLECTIVE_TIMEOUT seconds; then every waiting replica raises lt::Error.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/core/replica.hpp"
#include "lazytensor/distributed/process_link.hpp"

namespace lt::distributed {

class LocalGroup final : public detail::ReplicaGroup {
 public:
  LocalGroup(int replicas, ProcessLink* link, std::chrono::milliseconds timeout)
      : replicas_(replicas),
        link_(link),
        rank_(link != nullptr ? link->rank() : 0),
        processes_(link != nullptr ? link->size() : 1),
        timeout_(timeout),
        here_(static_cast<std::size_t>(replicas), 0),
        posts_(static_cast<std::size_t>(replicas)) {}

  void collective(int local, const detail::CollectiveCall& call) override;
  std::vector<std::byte> exchange(int local, std::string_view tag, std::span<const std::byte> bytes) override;

  /// Releases every waiting replica, now and later, with lt::Error naming `why`. True for the
  /// call that aborted the group first.
  bool abort(const std::string& why);
  int ordinal_of(int local) const { return rank_ * replicas_ + local; }

 private:
  /// What a replica brought to the current meeting.
  struct Post {
    std::string what;  // e.g. "all_reduce sum f32[4, 3]" or "rendezvous 'epoch'"
    const detail::CollectiveCall* call = nullptr;
    std::span<const std::byte> bytes;
  };

  /// Returns once every replica of this process has reached the same meeting.
  void meet(int local, std::string_view what);
  /// Raises, on every replica alike, when the posts disagree.
  void check_posts(std::string_view what) const;
  /// Raises on every replica when the processes' posts disagree (the leader asks the link).
  void check_processes(int local, std::string_view what);
  /// Runs `f` and, when it throws, aborts the group before rethrowing, so that no replica
  /// waits for this one.
  template <class F> void guarded(int local, std::string_view what, F&& f);

  void run_in_process(int local, const detail::CollectiveCall& call);
  void run_across_processes(int local, const detail::CollectiveCall& call);

  const int replicas_;
  ProcessLink* const link_;
  const int rank_, processes_;
  const std::chrono::milliseconds timeout_;

  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;             // guarded by mu_
  std::uint64_t meeting_ = 0;   // guarded by mu_: meetings completed
  std::vector<char> here_;      // guarded by mu_: who has come to the current meeting
  std::string aborted_;         // guarded by mu_: why the group stopped; empty while it runs

  // Written by each replica before a meeting and read by all after it.
  std::vector<Post> posts_;
  std::vector<std::byte> staging_, received_;  // the leader's buffers for the process link
  std::string process_mismatch_;
};

}  // namespace lt::distributed
