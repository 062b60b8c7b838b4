#!/usr/bin/env bash
# The sanitizer reports of a `make asan` run (ASAN_OPTIONS=log_path=DIR/asan: one file per
# process that reported). AddressSanitizer warns once per process that it does not fully support
# swapcontext, which the calls' tasks use (common/task.c, told of every switch); that warning
# went to stderr and broke every test that reads a server's log as JSON lines. Here it is set
# aside; anything else a file holds (an error, a leak) is printed, and the run fails.
set -euo pipefail
dir=${1:?usage: scripts/asan-reports.sh DIR}
bad=0
shopt -s nullglob
for f in "$dir"/asan.*; do
  if grep -qv "ASan doesn't fully support makecontext/swapcontext" "$f"; then
    echo "== sanitizer report: $f"
    cat "$f"
    bad=1
  fi
done
if ((bad)); then
  echo "make asan: the reports above came from processes of the run" >&2
  exit 1
fi
echo "make asan: no sanitizer report (the swapcontext warnings set aside: $(ls "$dir" | wc -l) process(es))"
