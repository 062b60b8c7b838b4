#!/usr/bin/env bash
# fuzz.sh BUILD_DIR SECONDS: runs every libFuzzer target of BUILD_DIR (make fuzz builds them)
# for SECONDS each. Seeds: tests/fuzz/corpus-NAME for target NAME (small, kept in the tree, with
# every input a campaign found as a regression case), and for fuzz_mcp and fuzz_jwt the ones
# tests/fuzz/seeds.mjs writes (the request bodies of tests/protocol/cases.json, a few claim sets).
# Corpora grow under BUILD_DIR/corpus-*; a crash leaves its input as BUILD_DIR/crash-* and fails
# the run. FUZZ_ONLY="frame schema" runs those targets only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
B=${1:-build/fuzz}
secs=${2:-60}
for t in "$B"/fuzz_*; do
  name=${t##*/fuzz_}
  mkdir -p "$B/corpus-$name"
  if [[ -d tests/fuzz/corpus-$name ]]; then cp tests/fuzz/corpus-"$name"/* "$B/corpus-$name/"; fi
done
node tests/fuzz/seeds.mjs "$B"
rc=0
for t in "$B"/fuzz_*; do
  name=${t##*/fuzz_}
  [[ -n ${FUZZ_ONLY:-} && " $FUZZ_ONLY " != *" $name "* ]] && continue
  echo "== $name: ${secs}s"
  if ! "$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$B/crash-$name-" -print_final_stats=1 "$B/corpus-$name" 2>"$B/$name.log"; then
    rc=1
    tail -n 60 "$B/$name.log"
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' "$B/$name.log" || true
done
exit $rc
