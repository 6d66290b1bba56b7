#pragma once
// The link between the processes of a run (MPI, distributed/mpi_link.hpp). One thread of each
// process calls it at a time; every process makes the same calls in the same order.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/replica.hpp"

namespace lt::distributed {

class ProcessLink {
 public:
  virtual ~ProcessLink() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// out[i] = the reduction over processes, in a fixed tree over the ranks, of every
  /// process's in[i]; every
  /// process gets the same bits. `in` may be `out`.
  virtual void all_reduce(ReduceOp op, DType t, const std::byte* in, std::byte* out, std::int64_t n) = 0;
  /// all = every process's `bytes` bytes of `mine`, in rank order.
  virtual void all_gather(const std::byte* mine, std::size_t bytes, std::byte* all) = 0;
  /// Process `root`'s `bytes` bytes of data, everywhere.
  virtual void broadcast(std::byte* data, std::size_t bytes, int root) = 0;
  /// Ends every process of the run: the others may be waiting in a call that never returns.
  [[noreturn]] virtual void abort(std::string_view why) = 0;
};

/// The link of this process when the program runs under a process launcher (mpirun), made on
/// first use; null otherwise (or when the library was built without MPI).
ProcessLink* process_link();

}  // namespace lt::distributed
