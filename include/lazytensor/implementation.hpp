#pragma once
// The implementation of lazytensor: every op's kernels, the scheduler and the runtime,
// compiled once per program. Include it in exactly one .cpp file of a program that uses the
// library (CMake's lazytensor::lazytensor target builds one for you), and include nothing of
// lazytensor before it in that file: the other headers declare what this one defines.
#if defined(LAZYTENSOR_USER_HEADERS)
#error "lazytensor/implementation.hpp must come before any other lazytensor header in its file"
#endif
#define LAZYTENSOR_IMPLEMENTATION 1

#include "lazytensor/ops/collective.hpp"
#include "lazytensor/ops/attention.hpp"
#include "lazytensor/ops/contraction.hpp"
#include "lazytensor/ops/creation.hpp"
#include "lazytensor/ops/indexing.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/ops/movement.hpp"
#include "lazytensor/ops/pool.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/ops/registry.hpp"
#include "lazytensor/ops/kernel_levels_definitions.hpp"
#include "lazytensor/core/definitions.hpp"
#include "lazytensor/expr/definitions.hpp"
#include "lazytensor/ops/definitions.hpp"
#include "lazytensor/runtime/definitions.hpp"
#include "lazytensor/runtime/plan_dump_definitions.hpp"
#include "lazytensor/runtime/profiler_summary_definitions.hpp"
#include "lazytensor/trace/definitions.hpp"
#include "lazytensor/trace/bf16_storage_definitions.hpp"
#include "lazytensor/trace/functions/definitions.hpp"
#include "lazytensor/autograd/in_place_definitions.hpp"
#include "lazytensor/autograd/tensor_methods_definitions.hpp"
#include "lazytensor/ops/kernels/parallel_definitions.hpp"
#include "lazytensor/optim/definitions.hpp"
#include "lazytensor/data/definitions.hpp"
#include "lazytensor/nn/functional/definitions.hpp"
#include "lazytensor/nn/utils/definitions.hpp"
#include "lazytensor/distributed/definitions.hpp"
#include "lazytensor/io/definitions.hpp"
