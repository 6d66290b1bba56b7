#pragma once
// lazytensor's optimizers and learning-rate schedules (lt::optim).
#include "lazytensor/lazytensor.hpp"
#include "lazytensor/optim/adam.hpp"
#include "lazytensor/optim/lr_scheduler.hpp"
#include "lazytensor/optim/optimizer.hpp"
#include "lazytensor/optim/sgd.hpp"
#include "lazytensor/optim/warmup_schedules.hpp"
