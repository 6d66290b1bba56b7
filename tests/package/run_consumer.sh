#!/usr/bin/env bash
# Usage: run_consumer.sh install|subdir <source dir> <work dir> <generator> <compiler> [build type]
#   install: install lazytensor into <work dir>/prefix, then build the consumer
#            project against it with find_package.
#   subdir:  build a project that pulls lazytensor in with add_subdirectory, with strict
#            warnings as errors; installing it must install its program and nothing of lazytensor.
# Either way the consumer program is run and must exit 0.
set -euo pipefail
mode=$1 src=$2 work=$3 generator=$4 compiler=$5
build_type=${6:-Release}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Start clean so that nothing from an earlier run can hide a packaging bug.
rm -rf "$work"
mkdir -p "$work"

# -O1: the consumers only check a tiny computation; optimizing harder just costs time.
common=(-G "$generator" -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE="$build_type"
        "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG")

run() { echo "+ $*"; "$@"; }

case $mode in
  install)
    run cmake -S "$src" -B "$work/lazytensor-build" "${common[@]}" \
        -DLAZYTENSOR_BUILD_TESTS=OFF -DLAZYTENSOR_BUILD_EXAMPLES=OFF -DLAZYTENSOR_BUILD_BENCHMARKS=OFF
    run cmake --install "$work/lazytensor-build" --prefix "$work/prefix"
    run cmake -S "$here/consumer" -B "$work/consumer-build" "${common[@]}" \
        -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON
    ;;
  subdir)
    run cmake -S "$here/subdir_consumer" -B "$work/consumer-build" "${common[@]}" \
        -DLAZYTENSOR_SOURCE_DIR="$src"
    ;;
  *)
    echo "unknown mode: $mode" >&2
    exit 2
    ;;
esac
run cmake --build "$work/consumer-build" --config "$build_type"
if [[ $mode == subdir ]]; then
  # LAZYTENSOR_INSTALL is off below a parent project: installing it installs the program only.
  run cmake --install "$work/consumer-build" --config "$build_type" --prefix "$work/prefix"
  stray=$(find "$work/prefix" -path "$work/prefix/bin" -prune -o -type f -print)
  [[ -z $stray ]] || { echo "add_subdirectory installed lazytensor's files:" >&2; echo "$stray" >&2; exit 1; }
  [[ -x $work/prefix/bin/app ]] || { echo "the consumer program was not installed" >&2; exit 1; }
fi
exe=$(find "$work/consumer-build" -type f -name app -perm -u+x | head -n 1)
[[ -n $exe ]] || { echo "consumer executable not found" >&2; exit 1; }
run "$exe"
echo "$mode consumer passed"
