// One capability level's copy of lazytensor's op layer: every op's kernels, compiled with that
// level's flags (cmake/lazytensorImplementation.cmake builds this file once per level and gives
// each copy's symbols names of its own, so that no inline function is shared between levels).
// It exports its descriptors under the name LT_KERNEL_LEVEL_ENTRY; the implementation picks
// one copy at load (lazytensor/ops/kernel_levels.hpp).
#define LAZYTENSOR_IMPLEMENTATION 1

#include <lazytensor/ops/attention.hpp>
#include <lazytensor/ops/collective.hpp>
#include <lazytensor/ops/contraction.hpp>
#include <lazytensor/ops/creation.hpp>
#include <lazytensor/ops/indexing.hpp>
#include <lazytensor/ops/kernel_levels.hpp>
#include <lazytensor/ops/kernels/gemm.hpp>
#include <lazytensor/ops/leaf.hpp>
#include <lazytensor/ops/movement.hpp>
#include <lazytensor/ops/pool.hpp>
#include <lazytensor/ops/reduction.hpp>
#include <lazytensor/ops/registry.hpp>

extern "C" constinit const lt::LevelKernels LT_KERNEL_LEVEL_ENTRY{lt::compiled_capability(), &lt::detail::ops_by_id,
                                                                  &lt::kernels::gemm_backend};
