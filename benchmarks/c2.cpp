// C2: what the library costs a user to compile. The README's first program
// (examples/demo.cpp) and examples/mnist.cpp are compiled alone, as a user's build compiles
// them, at -O0 and -O2: wall seconds, peak memory of the compiler and preprocessed lines, beside
// the limits of BENCHMARKS.md (the first program: 8 s and 500 MB at -O2; mnist.cpp: 20 s).
// The implementation (lazytensor/implementation.hpp), compiled once per build, is timed too.
//
//   bench_c2 [--quick]   (--quick: -O2 only, one run each)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Run {
  double seconds = 0;
  double peak_mb = 0;
  bool ok = false;
};

/// Runs the compiler with `args` and waits: its wall time and peak resident memory.
Run compile(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv.data());
    _exit(127);
  }
  Run r;
  if (pid < 0) return r;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

std::vector<std::string> base_args(const std::string& source) {
  return {LAZYTENSOR_C2_COMPILER, "@" LAZYTENSOR_C2_FLAGS, "-I" LAZYTENSOR_C2_EXAMPLES, source};
}

long count_lines(const std::string& path) {
  std::ifstream in(path);
  return static_cast<long>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 1 : 3;
  const std::string scratch = "/tmp/lazytensor_c2_" + std::to_string(getpid());
  struct Source {
    const char* name;
    std::string path;
    double seconds_limit, mb_limit;  // at -O2; 0: none
  };
  const Source sources[] = {{"README's first program", LAZYTENSOR_C2_EXAMPLES "/demo.cpp", 8, 500},
                            {"examples/mnist.cpp", LAZYTENSOR_C2_EXAMPLES "/mnist.cpp", 20, 0},
                            {"the implementation (once per build)", LAZYTENSOR_C2_IMPLEMENTATION, 0, 0}};
  std::printf("C2: one compiler run per file (median of %d; ratio: / the limit at -O2)\n", reps);
  int failures = 0;
  for (const Source& s : sources) {
    std::vector<std::string> pre = base_args(s.path);
    pre.insert(pre.end(), {"-E", "-o", scratch + ".ii"});
    const long lines = compile(pre).ok ? count_lines(scratch + ".ii") : -1;
    std::printf("  %s: %ld preprocessed lines\n", s.name, lines);
    for (const char* opt : {"-O0", "-O2"}) {
      if (quick && std::strcmp(opt, "-O0") == 0) continue;
      std::vector<Run> runs;
      for (int r = 0; r < reps; ++r) {
        std::vector<std::string> args = base_args(s.path);
        args.insert(args.end(), {opt, "-c", "-o", scratch + ".o"});
        runs.push_back(compile(args));
        failures += !runs.back().ok;
      }
      std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
      const Run& m = runs[runs.size() / 2];
      const bool limited = std::strcmp(opt, "-O2") == 0 && s.seconds_limit > 0;
      std::printf("    %s  %8.2f s", opt, m.seconds);
      if (limited) std::printf("  ratio %5.2f", m.seconds / s.seconds_limit);
      std::printf("  %8.0f MB", m.peak_mb);
      if (limited && s.mb_limit > 0) std::printf("  ratio %5.2f", m.peak_mb / s.mb_limit);
      std::printf("\n");
    }
  }
  std::remove((scratch + ".ii").c_str());
  std::remove((scratch + ".o").c_str());
  if (failures) std::printf("  %d compiler run(s) failed\n", failures);
  return failures ? 1 : 0;
}
