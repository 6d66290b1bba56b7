#pragma once
// A fault found while a step runs (an index out of range, an integer division by zero) names
// the line that recorded the failing node: the kernel's lt::Error, raised again with the node's
// site added, once, where the executors run each node's kernel.
#include "lazytensor/core/error.hpp"
#include "lazytensor/core/site.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt::detail {

/// An lt::Error that names the line that recorded the node that raised it.
class NodeFault : public Error {
 public:
  using Error::Error;
};

/// Inside a handler of the error that running node `n` raised: raises it again, naming the
/// line that recorded `n` (a fault named once already passes as it is).
[[noreturn]] inline void raise_recorded_at(const Node& n) {
  try {
    throw;
  } catch (const NodeFault&) {
    throw;
  } catch (const Error& e) {
    if (!known(n.site)) throw;
    throw NodeFault(concat(e.what(), " (", n.op->name, " recorded at ", site_text(n.site), ")"));
  }
}

}  // namespace lt::detail
