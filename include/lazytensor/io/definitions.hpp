#pragma once
// io/'s functions that a program compiles once: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own. They keep nlohmann-json out of
// the headers users include.
#include "lazytensor/io/checkpoint_io.hpp"
#include "lazytensor/io/header_parser.hpp"
#include "lazytensor/io/header_writer.hpp"
#include "lazytensor/io/safetensors_io.hpp"
