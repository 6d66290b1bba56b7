#pragma once
// ops/kernels/parallel.hpp's loop over TBB's threads, defined once per program: included by
// the implementation (lazytensor/implementation.hpp), never by a file of its own.
#include <cstdint>
#include <memory>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "lazytensor/core/env.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"

namespace lt::kernels {

namespace detail {
// The limit lives as long as the program.
void apply_thread_limit() {
  static const std::unique_ptr<tbb::global_control> limit = []() -> std::unique_ptr<tbb::global_control> {
    const std::int64_t n = lt::detail::env_count("LT_NUM_THREADS", 0);
    if (n == 0) return nullptr;
    return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(n));
  }();
}

void parallel_blocks_impl(std::int64_t n, std::int64_t grain, BlockFn f) {
  apply_thread_limit();
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, grain),
                    [f](const tbb::blocked_range<std::int64_t>& r) { f(r.begin(), r.end()); },
                    tbb::simple_partitioner{});
}
}  // namespace detail

}  // namespace lt::kernels
