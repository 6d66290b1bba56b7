#pragma once
// (being written)
#include "lazytensor/trace/dispatch.hpp"
