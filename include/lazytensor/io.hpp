#pragma once
// lazytensor files: safetensors save and load, and checkpoints of a whole training run.
// Kept out of lazytensor.hpp: it brings nn, optim and the data loader's position.
#include "lazytensor/io/checkpoint.hpp"
#include "lazytensor/io/safetensors.hpp"
