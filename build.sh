#!/usr/bin/env bash
# Build helper for Debian 12: installs missing packages, configures and builds
# into build/, then runs the demo, the tests or the benchmarks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

BUILD_DIR=build
PACKAGES=(cmake g++ make pkg-config libeigen3-dev libboost-dev libxxhash-dev libtbb-dev
          libgtest-dev googletest libbenchmark-dev libopenblas-dev nlohmann-json3-dev
          libopenmpi-dev openmpi-bin)

log() { printf '==> %s\n' "$*"; }

usage() {
  cat <<USAGE
usage: $0 <command> [args...]
  demo    build and run examples/mnist.cpp, a CNN trained on Fashion-MNIST (args go to it, e.g.
          --epochs N or --fake-data; installs dataset-fashion-mnist)
  test    build everything and run the test suite with ctest
  bench   build and run every benchmark in $BUILD_DIR/benchmarks
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

cmd=${1:-}
shift $(($# > 0))
case $cmd in
  demo)
    ensure_packages "${PACKAGES[@]}" dataset-fashion-mnist
    configure -DLAZYTENSOR_BUILD_EXAMPLES=ON
    build mnist
    log "running $BUILD_DIR/examples/mnist $*"
    "./$BUILD_DIR/examples/mnist" "$@"
    ;;
  test)
    ensure_packages "${PACKAGES[@]}"
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
    ensure_packages "${PACKAGES[@]}" xtensor-dev libxsimd-dev
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
  -h|--help|help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
