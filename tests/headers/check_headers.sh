#!/usr/bin/env bash
# Usage: check_headers.sh <compiler> <flags.rsp> <list>
# <list> has one "header<TAB>source.cpp" line per header; each source is checked
# with -fsyntax-only, two at a time, and every failing header is named.
set -euo pipefail
export compiler=$1 rsp=$2
list=$3

check_one() {
  local out
  if out=$("$compiler" "@$rsp" -fsyntax-only "$2" 2>&1); then
    printf 'ok      %s\n' "$1"
  else
    printf 'FAILED  %s is not self-contained:\n%s\n' "$1" "$out"
    return 1
  fi
}
export -f check_one

count=$(grep -c . "$list" || true)
echo "checking $count headers with $compiler"
# xargs exits non-zero if any check failed; keep going so that all failures show.
if tr '\t' '\n' < "$list" | xargs -r -d '\n' -n 2 -P 2 bash -c 'check_one "$@"' _; then
  echo "all $count headers are self-contained"
else
  echo "some headers are not self-contained (see FAILED above)" >&2
  exit 1
fi
