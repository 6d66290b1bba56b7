#pragma once
// Several devices: replicas (lt::launch), collectives in the step graph, data-parallel training
// helpers and the distributed sampler.
#include "lazytensor/data/distributed_sampler.hpp"
#include "lazytensor/distributed/collectives.hpp"
#include "lazytensor/distributed/launch.hpp"
#include "lazytensor/distributed/training.hpp"
