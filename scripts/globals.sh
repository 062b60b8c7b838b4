#!/usr/bin/env bash
# globals.sh BUILD_DIR: fails when an object of server/protocol/, server/capabilities/ or
# server/transport/ holds mutable process-wide data (an object symbol in .data or .bss, static or
# not, function-scope statics included; .data.rel.ro is read-only once relocated): state of a request or a server lives in the structs that are
# passed down. A singleton that stays (the database settings, the change follower,
# the logger) lives in domain/ or common/, and its header says so.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
bad=0
n=0
for o in "$B"/server/protocol/*.o "$B"/server/capabilities/*.o "$B"/server/transport/*.o; do
  [[ -e $o ]] || { echo "globals: $o missing (build first)" >&2; exit 2; }
  n=$((n + 1))
  # (A sanitizer build adds its own bookkeeping symbols: __odr_asan.*, __asan_*, __ubsan_*.)
  syms=$(objdump -t "$o" | awk '$3 == "O" && $4 !~ /^\.data\.rel\.ro/ && $4 ~ /^\.(data|bss)/ &&
    $NF !~ /^__(odr_asan|asan_|ubsan_|sancov)/ { print $NF }')
  if [[ -n $syms ]]; then
    bad=1
    for s in $syms; do echo "${o#"$B"/}: mutable process-wide variable $s"; done
  fi
done
echo "globals: $n objects of protocol/, capabilities/, transport/: $([[ $bad == 0 ]] && echo none mutable || echo 'see above')"
exit $bad
