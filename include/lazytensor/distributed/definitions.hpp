#pragma once
// lt::launch, rendezvous and the process link, defined: included once per program, by the
// implementation (lazytensor/implementation.hpp).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include "lazytensor/core/env.hpp"
#include "lazytensor/core/random.hpp"
#include "lazytensor/distributed/launch.hpp"
#include "lazytensor/distributed/local_group_across.hpp"
#include "lazytensor/runtime/api.hpp"
#include "lazytensor/runtime/step_queue.hpp"
#ifdef LAZYTENSOR_HAS_MPI
#include "lazytensor/distributed/mpi_link.hpp"
#endif

namespace lt {

namespace distributed {
namespace detail {
/// Whether a process launcher started this process as one of several.
inline int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  return 1;
}
}  // namespace detail

ProcessLink* process_link() {
#ifdef LAZYTENSOR_HAS_MPI
  static const std::unique_ptr<MpiLink> link = detail::launcher_world_size() > 1 ? std::make_unique<MpiLink>() : nullptr;
  return link.get();
#else
  LT_CHECK(detail::launcher_world_size() == 1,
           "launch: this program runs as one of several processes, but lazytensor was built without MPI "
           "(LAZYTENSOR_MPI=OFF)");
  return nullptr;
#endif
}
}  // namespace distributed

namespace {
/// Steps of devices 0..n-1 finished, their unraised errors dropped: a launch starts and ends
/// with its devices idle.
void settle_devices(int n) {
  for (int r = 0; r < n; ++r) {
    detail::StepQueue& queue = detail::step_queue(r);
    queue.wait_idle();
    (void)queue.take_error();
  }
}
}  // namespace

void launch(const std::function<void(int)>& fn, LaunchOptions options) {
  LT_CHECK(options.replicas >= 1 && options.replicas <= max_lazy_devices, "launch: replicas must be in [1, ",
           max_lazy_devices, "], got ", options.replicas);
  static std::atomic<bool> running{false};
  LT_CHECK(!running.exchange(true), "launch: another launch is running (launches do not nest)");
  struct Done {
    ~Done() { running.store(false); }
  } done;
  const int replicas = options.replicas;
  distributed::ProcessLink* link = distributed::process_link();
  const int processes = link != nullptr ? link->size() : 1, rank = link != nullptr ? link->rank() : 0;
  const auto timeout = std::chrono::milliseconds(detail::env_count("LT_COLLECTIVE_TIMEOUT", 300) * 1000);
  distributed::LocalGroup group(replicas, link, timeout);
  settle_devices(replicas);
  auto& slots = detail::replica_slots();
  for (int r = 0; r < replicas; ++r)
    slots[static_cast<std::size_t>(r)] = {rank * replicas + r, r, processes * replicas, replicas, &group};

  const std::int64_t threads = detail::env_count("LT_NUM_THREADS", tbb::info::default_concurrency());
  const int width = static_cast<int>(std::max<std::int64_t>(1, threads / replicas));
  std::vector<Generator> generators(static_cast<std::size_t>(replicas));
  for (Generator& g : generators) g.set_state(default_generator().state());

  std::mutex first_mu;
  std::exception_ptr first;
  const bool reproducible = options.reproducible || detail::env_flag("LT_REPRODUCIBLE", false);
  auto run_replica = [&](int r) {
    detail::current_lazy_index = r;
    detail::reproducible_sums = reproducible;
    detail::replica_generator = &generators[static_cast<std::size_t>(r)];
    const int ordinal = rank * replicas + r;
    try {
      tbb::task_arena arena(width);
      arena.execute([&] {
        fn(ordinal);
        // The replica's last steps may still hold collectives: it is done when they are.
        wait_device_ops();
      });
    } catch (...) {
      // The first error is the one that stopped the group, or the first raised after a
      // timeout stopped it; under the lock, no replica it released can come before it.
      std::string why = "replica " + std::to_string(ordinal) + " failed";
      try {
        throw;
      } catch (const std::exception& e) {
        why += std::string(": ") + e.what();
      } catch (...) {
      }
      std::lock_guard lock(first_mu);
      if (group.abort(why) || !first) first = std::current_exception();
    }
    detail::replica_generator = nullptr;
    detail::reproducible_sums = false;
  };
  std::vector<std::thread> workers;
  for (int r = 0; r < replicas; ++r) workers.emplace_back(run_replica, r);
  for (std::thread& t : workers) t.join();
  settle_devices(replicas);
  for (int r = 0; r < replicas; ++r) slots[static_cast<std::size_t>(r)] = {};
  if (first && link != nullptr) {
    try {
      std::rethrow_exception(first);
    } catch (const std::exception& e) {
      link->abort(e.what());
    } catch (...) {
      link->abort("a replica failed");
    }
  }
  if (first) std::rethrow_exception(first);
}

namespace detail {
std::vector<std::byte> exchange_host(std::string_view tag, std::span<const std::byte> bytes) {
  const ReplicaSlot& slot = replica_slot();
  if (slot.group == nullptr) return {bytes.begin(), bytes.end()};
  // After the device's queued work: a replica's collectives and host exchanges then come in
  // the order the program made them.
  step_queue(current_lazy_index).wait_idle();
  return slot.group->exchange(slot.local_ordinal, tag, bytes);
}
}  // namespace detail

void rendezvous(std::string_view tag) { (void)detail::exchange_host(tag, {}); }

}  // namespace lt
