#pragma once
// The process link over MPI: defined in the implementation only, when the library is built with
// MPI (LAZYTENSOR_HAS_MPI). A reduction is an exchange of shards (MPI_Alltoallv), a sum of each
// shard in a fixed tree over the ranks, and a gather of the shards (MPI_Allgatherv): the bytes
// moved of a ring all-reduce, in an order that MPI's own reductions do not promise.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <mpi.h>

#include "lazytensor/core/error.hpp"
#include "lazytensor/distributed/combine.hpp"
#include "lazytensor/distributed/process_link.hpp"

namespace lt::distributed {

class MpiLink final : public ProcessLink {
 public:
  MpiLink() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // One thread calls MPI at a time (the first replica's), but not always the same one.
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      owns_ = true;
      if (provided < MPI_THREAD_SERIALIZED) abort("MPI does not provide MPI_THREAD_SERIALIZED");
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiLink() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    if (owns_) MPI_Finalize();
  }
  MpiLink(const MpiLink&) = delete;
  MpiLink& operator=(const MpiLink&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce(ReduceOp op, DType t, const std::byte* in, std::byte* out, std::int64_t n) override {
    std::lock_guard lock(mu_);
    const auto item = static_cast<std::int64_t>(itemsize(t));
    // Pieces small enough for MPI's int counts.
    const std::int64_t piece = std::max<std::int64_t>(1, (std::int64_t{1} << 30) / item);
    for (std::int64_t at = 0; at < n; at += piece)
      all_reduce_piece(op, t, in + at * item, out + at * item, std::min(piece, n - at));
  }

  void all_gather(const std::byte* mine, std::size_t bytes, std::byte* all) override {
    std::lock_guard lock(mu_);
    check(MPI_Allgather(mine, count(bytes), MPI_BYTE, all, count(bytes), MPI_BYTE, comm_), "MPI_Allgather");
  }

  void broadcast(std::byte* data, std::size_t bytes, int root) override {
    std::lock_guard lock(mu_);
    check(MPI_Bcast(data, count(bytes), MPI_BYTE, root, comm_), "MPI_Bcast");
  }

  [[noreturn]] void abort(std::string_view why) override {
    std::fprintf(stderr, "lazytensor: ending every process of the run: %.*s\n", static_cast<int>(why.size()), why.data());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }

 private:
  static int count(std::size_t bytes) {
    LT_CHECK(bytes <= static_cast<std::size_t>(INT_MAX), "MPI: ", bytes, " bytes are more than one call can move");
    return static_cast<int>(bytes);
  }
  static void check(int code, const char* call) { LT_CHECK(code == MPI_SUCCESS, call, " failed with code ", code); }

  /// Each process reduces one shard: it receives that shard of every other process's `in`
  /// (its own it reads in place), adds them in a fixed tree over the ranks into the shard of `out`, then the
  /// shards are gathered into every process's `out`.
  void all_reduce_piece(ReduceOp op, DType t, const std::byte* in, std::byte* out, std::int64_t n) {
    const auto item = static_cast<std::int64_t>(itemsize(t));
    const auto procs = static_cast<std::size_t>(size_), me = static_cast<std::size_t>(rank_);
    std::vector<int> counts(procs), displs(procs), send_counts(procs), recv_counts(procs), recv_displs(procs);
    for (std::size_t p = 0; p < procs; ++p) {
      const std::int64_t begin = n * static_cast<std::int64_t>(p) / size_, end = n * static_cast<std::int64_t>(p + 1) / size_;
      counts[p] = static_cast<int>((end - begin) * item);
      displs[p] = static_cast<int>(begin * item);
    }
    const int mine = counts[me];
    for (std::size_t p = 0; p < procs; ++p) {
      send_counts[p] = p == me ? 0 : counts[p];
      recv_counts[p] = p == me ? 0 : mine;
      recv_displs[p] = static_cast<int>(p) * mine;
    }
    shards_.resize(static_cast<std::size_t>(mine) * procs);
    check(MPI_Alltoallv(in, send_counts.data(), displs.data(), MPI_BYTE, shards_.data(), recv_counts.data(),
                        recv_displs.data(), MPI_BYTE, comm_),
          "MPI_Alltoallv");
    std::byte* shard = out + displs[me];
    std::vector<const std::byte*> sources;
    for (std::size_t p = 0; p < procs; ++p)
      sources.push_back(p == me ? in + displs[me] : shards_.data() + p * static_cast<std::size_t>(mine));
    reduce_range(op, t, sources, std::span<std::byte* const>(&shard, 1), 0, mine / item);
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts.data(), displs.data(), MPI_BYTE, comm_),
          "MPI_Allgatherv");
  }

  std::mutex mu_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  bool owns_ = false;
  std::vector<std::byte> shards_;
};

}  // namespace lt::distributed
