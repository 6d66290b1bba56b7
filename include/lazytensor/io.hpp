#pragma once
// lazytensor files: safetensors save and load, and checkpoints of a whole training run (lt::io,
// with the main names in lt). Kept out of lazytensor.hpp: it brings nn, optim and data.
#include "lazytensor/io/safetensors.hpp"
