#pragma once
// The descriptors of the op table's non-elementwise ops, declared: what tracing needs of them.
// Each is defined beside its kernels (ops/<group>.hpp), in the implementation only.
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/op_table.hpp"

namespace lt {
#define LT_DECLARE_OP(group, descriptor, id, number)           \
  namespace group {                                            \
  extern const OpDesc descriptor;                              \
  inline constexpr OpRow descriptor##_row{OpId::id, #id};      \
  }
LT_OP_TABLE(LT_DECLARE_OP)
#undef LT_DECLARE_OP
}  // namespace lt
