#pragma once
// What each fuzz harness defines: libFuzzer's entry point, and the seeds of its corpus. The
// harnesses build two ways: with clang's libFuzzer (./build.sh fuzz) and, in every test build,
// with replay_main.cpp, which runs each saved input once as a CTest test.
#include <cstddef>
#include <cstdint>
#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

/// Writes the harness's seed inputs into `dir` (replay_main --write-seeds DIR).
void write_fuzz_seeds(const std::filesystem::path& dir);
