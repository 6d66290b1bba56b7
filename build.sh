#!/usr/bin/env bash
# Build helper for Debian 12: installs missing packages, configures and builds
# into build/, then runs the demo, the tests or the benchmarks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PACKAGES=(cmake g++ make pkg-config libeigen3-dev libboost-dev libxxhash-dev libtbb-dev
          libgtest-dev googletest libbenchmark-dev libopenblas-dev nlohmann-json3-dev zlib1g-dev
          libopenmpi-dev openmpi-bin)

# The compiler is $CXX (GCC when unset). Each compiler builds in folders of its own, so that
# GCC's and clang's builds never clash: CXX=clang++ builds in build-clang (build-sanitize-clang
# for test --sanitize), CXX=clang++-14 in build-clang-14. A Debian compiler that is missing is
# installed with the other packages (clang++ is Debian 12's clang, version 14).
CXX=${CXX:-}
compiler=$(basename "${CXX:-g++}")
case $compiler in
  g++|c++) SUFFIX= COMPILER_PACKAGES=() ;;
  g++-*) SUFFIX=-gcc-${compiler#g++-} COMPILER_PACKAGES=("g++-${compiler#g++-}") ;;
  clang++) SUFFIX=-clang COMPILER_PACKAGES=(clang) ;;
  clang++-*) SUFFIX=-clang-${compiler#clang++-} COMPILER_PACKAGES=("clang-${compiler#clang++-}") ;;
  *) SUFFIX=-$compiler COMPILER_PACKAGES=() ;;
esac
# clang's sanitizer runtimes are a package of their own.
case $compiler in
  clang++) SANITIZER_PACKAGES=(libclang-rt-dev) ;;
  clang++-*) SANITIZER_PACKAGES=("libclang-rt-${compiler#clang++-}-dev") ;;
  *) SANITIZER_PACKAGES=() ;;
esac
[[ -z $CXX ]] || export CXX
BUILD_DIR=build$SUFFIX

log() { printf '==> %s\n' "$*"; }

usage() {
  cat <<USAGE
usage: $0 <command> [args...]
  demo    build and run examples/mnist.cpp, a CNN trained on Fashion-MNIST (args go to it, e.g.
          --epochs N, --fake-data or --precision bf16; installs dataset-fashion-mnist)
          demo gpt [args]: examples/gpt.cpp, a byte-level GPT trained on Debian's fortunes
          (e.g. --epochs N, --steps N, --layers N; installs fortunes)
  test    build everything and run the test suite with ctest
          --sanitize: the runtime, trace and op tests under ASan and UBSan, in build-sanitize
          (and a program built with plain -fsanitize=address,undefined)
  bench   build and run every benchmark in $BUILD_DIR/benchmarks
  docs    write the API reference (Doxygen) to $BUILD_DIR/docs/html and fail on any undocumented
          public member (installs doxygen)
  fuzz    build the fuzz harnesses with clang's libFuzzer (ASan, UBSan) in build-fuzz and run each
          for N seconds (first arg, default 60) at the lowest priority; findings land in build-fuzz
The compiler is \$CXX (default g++), e.g. CXX=clang++ $0 test; each compiler builds in folders
of its own (build, build-sanitize; build-clang, build-sanitize-clang; build-clang-14, ...).
USAGE
}

is_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

# Installs only what is missing, so repeat runs need neither network nor root.
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    is_installed "$pkg" || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    log "dependencies present"
    return
  fi
  # env: sudo drops the caller's environment, and apt must never prompt.
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "missing packages ${missing[*]}; run as root or install sudo" >&2; exit 1; }
    apt=(sudo "${apt[@]}")
  fi
  log "installing missing packages: ${missing[*]}"
  "${apt[@]}" update
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
}

configure() {
  log "configuring $BUILD_DIR${*:+ ($*)}"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DLAZYTENSOR_BUILD_TESTS=ON "$@"
}

# build [target...]: everything when no target is named.
build() {
  local targets=()
  (($# == 0)) || targets=(--target "$@")
  log "building ${*:-all targets} with $(nproc) jobs"
  cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
}

# The runtime, trace and op tests built with the compiler's AddressSanitizer and the whole
# UndefinedBehaviorSanitizer set (float-cast-overflow too; not float-divide-by-zero, which
# IEEE 754 defines and ops use for infinities), in a build folder of their own. Any report
# ends its test with a failure.
sanitized_tests() {
  BUILD_DIR=build-sanitize$SUFFIX
  local flags="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
  # The kernels at the build's flags alone: ASan registers each global by its source name, and
  # the level objects' renamed copies of the same constants would read as ODR violations.
  configure -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" -DLAZYTENSOR_KERNEL_LEVELS=OFF \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
  # sanitized_consumer: a program compiled with plain -fsanitize=address,undefined besides.
  build runtime_tests trace_tests ops_tests sanitized_consumer
  log "running the runtime, trace and op tests and a sanitized program under ASan and UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j 2 --timeout 1200 -L '^((runtime|trace|ops)_tests|sanitized_consumer)$'
}

# The fuzz harnesses (tests/fuzz) as libFuzzer binaries: clang, with the library instrumented
# for coverage and built under ASan and UBSan, in a build folder of its own. Each runs for
# `seconds` on a scratch corpus seeded from the saved one, niced so as not to starve builds.
fuzz() {
  local seconds=${1:-60}
  BUILD_DIR=build-fuzz
  configure -DCMAKE_CXX_COMPILER=clang++-19 -DLAZYTENSOR_FUZZERS=ON -DLAZYTENSOR_KERNEL_LEVELS=OFF -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
  build plan_fuzzer idx_fuzzer
  local harness
  for harness in plan idx; do
    mkdir -p "$BUILD_DIR/corpus/$harness" "$BUILD_DIR/findings"
    log "fuzzing $harness for ${seconds}s"
    nice -n 19 "./$BUILD_DIR/tests/fuzz/${harness}_fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$BUILD_DIR/findings/$harness-" \
      "$BUILD_DIR/corpus/$harness" "tests/fuzz/corpus/$harness" || fuzz_failed "$harness"
  done
  # The safetensors header parser, compiled alone (io/header_parser.hpp and what it includes).
  clang++-19 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Iinclude tests/io/fuzz/header_fuzz.cpp -o "$BUILD_DIR/header_fuzzer"
  mkdir -p "$BUILD_DIR/corpus/header"
  log "fuzzing the safetensors header parser for ${seconds}s"
  nice -n 19 "./$BUILD_DIR/header_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$BUILD_DIR/findings/header-" "$BUILD_DIR/corpus/header" tests/io/fuzz/corpus || fuzz_failed header
}

# The API reference: doxygen over the public headers (docs/Doxyfile) into $BUILD_DIR/docs. Every
# header an umbrella header includes must be an input, and any warning (an undocumented public
# member, a malformed comment) fails the command. What counts as public: docs/api-reference.md.
docs() {
  local out=$BUILD_DIR/docs header dir missing=()
  mapfile -t headers < <(grep -ho '#include "lazytensor/[^"]*"' \
    include/lazytensor/{lazytensor,nn,optim,data,distributed,io}.hpp | sed 's/^#include "//; s/"$//' | sort -u)
  for header in "${headers[@]}"; do
    dir=$(dirname "$header")
    grep -qE "include/($header|$dir)( |\\\\|$)" docs/Doxyfile || missing+=("include/$header")
  done
  if ((${#missing[@]} > 0)); then
    echo "docs: headers included by an umbrella header but not inputs of docs/Doxyfile: ${missing[*]}" >&2
    exit 1
  fi
  rm -rf "$out"
  mkdir -p "$out"
  log "writing the API reference to $out/html"
  LT_DOCS_DIR=$out doxygen docs/Doxyfile
  if [[ -s $out/warnings.log ]]; then
    # Doxygen repeats a member's warning for each class that inherits it.
    sort -u "$out/warnings.log" >&2
    echo "docs: $(sort -u "$out/warnings.log" | grep -c 'warning:') doxygen warnings (see above; $out/warnings.log)" >&2
    exit 1
  fi
  log "API reference: $out/html/index.html"
}

# A harness stopped on an input (a crash, a sanitizer report, a leak, a timeout, too much
# memory): print its findings in Base64, since a CI machine's build folder is not kept
# (libFuzzer prints only inputs of up to 256 bytes), and fail.
fuzz_failed() {
  local finding
  echo "fuzz: the $1 harness failed; its findings:" >&2
  for finding in "$BUILD_DIR/findings/$1-"*; do
    [[ -f $finding ]] || continue
    echo "$finding ($(stat -c %s "$finding") bytes), Base64:" >&2
    base64 -w 0 "$finding" >&2
    echo >&2
  done
  exit 1
}

cmd=${1:-}
shift $(($# > 0))
case $cmd in
  demo)
    # demo gpt [args]: the byte-level GPT of examples/gpt.cpp, trained on Debian's fortunes.
    example=mnist data=dataset-fashion-mnist
    if [[ ${1:-} == gpt ]]; then
      example=gpt data=fortunes
      shift
    fi
    ensure_packages "${PACKAGES[@]}" "${COMPILER_PACKAGES[@]}" "$data"
    configure -DLAZYTENSOR_BUILD_EXAMPLES=ON
    build "$example"
    log "running $BUILD_DIR/examples/$example $*"
    "./$BUILD_DIR/examples/$example" "$@"
    ;;
  test)
    if [[ ${1:-} == --sanitize ]]; then
      ensure_packages "${PACKAGES[@]}" "${COMPILER_PACKAGES[@]}" "${SANITIZER_PACKAGES[@]}"
      sanitized_tests
      exit
    fi
    # The sanitizer runtimes too: the suite builds a program under ASan and UBSan where it can.
    ensure_packages "${PACKAGES[@]}" "${COMPILER_PACKAGES[@]}" "${SANITIZER_PACKAGES[@]}"
    configure
    build
    log "running tests"
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j 2 --timeout 1200
    ;;
  bench)
    # LT_BENCH_BUILD_DIR: benchmark in a build folder of its own, apart from the tests'.
    BUILD_DIR=${LT_BENCH_BUILD_DIR:-$BUILD_DIR}
    # xtensor (with xsimd) is W1's peer in bench_w1; headers only. LibTorch peers need
    # libtorch-dev, installed by hand (BENCHMARKS.md).
    ensure_packages "${PACKAGES[@]}" "${COMPILER_PACKAGES[@]}" xtensor-dev libxsimd-dev
    configure -DLAZYTENSOR_BUILD_BENCHMARKS=ON
    build lazytensor_benchmarks  # the benchmarks alone: the tests need not be built to time
    mapfile -t benches < <(find "$BUILD_DIR/benchmarks" -maxdepth 1 -type f -executable -name 'bench_*' 2>/dev/null | sort)
    mapfile -t peers < <(find "$BUILD_DIR/benchmarks/peers" -maxdepth 1 -type f -executable -name 'bench_*' 2>/dev/null | sort)
    if ((${#benches[@]} == 0)); then
      echo "no benchmarks found in $BUILD_DIR/benchmarks" >&2
      exit 1
    fi
    # A limit is what the CPU can do: OpenBLAS picks its kernels from the CPU at load, and a
    # forced OPENBLAS_CORETYPE (Haswell's AVX2 on an AVX-512 CPU) would understate the SGEMM
    # limit and LibTorch's GEMMs alike.
    if [[ -n ${OPENBLAS_CORETYPE:-} ]]; then
      log "unsetting OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE: OpenBLAS chooses its kernels for this CPU"
      unset OPENBLAS_CORETYPE
    fi
    for bench in "${benches[@]}"; do
      log "running $bench $*"
      "$bench" "$@"
    done
    # Debian's LibTorch takes its BLAS from libblas.so.3, the reference BLAS unless an optimised
    # one holds that alternative; a LibTorch user has OpenBLAS, so peers run with the OpenMP
    # build (LibTorch's own threads are OpenMP) put first when libopenblas0-openmp is installed.
    openblas_dir=$(dpkg -L libopenblas0-openmp 2>/dev/null | grep '/libblas\.so\.3$' | head -n1 || true)
    peer_env=()
    if [[ -n $openblas_dir ]]; then
      peer_env=(env "LD_LIBRARY_PATH=$(dirname "$openblas_dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    fi
    for bench in "${peers[@]}"; do
      log "running peer $bench $*${openblas_dir:+ (BLAS: $(dirname "$openblas_dir"))}"
      "${peer_env[@]}" "$bench" "$@"
    done
    ;;
  docs)
    ensure_packages doxygen
    docs
    ;;
  fuzz)
    ensure_packages "${PACKAGES[@]}" clang-19 libclang-rt-19-dev
    fuzz "$@"
    ;;
  -h|--help|help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
