#!/usr/bin/env bash
# fuzz.sh BUILD_DIR SECONDS: runs every libFuzzer target of BUILD_DIR (make fuzz builds them)
# for SECONDS each. Seeds: the request bodies of tests/protocol/cases.json (each with a few
# transport/header flag bytes) for fuzz_mcp, a few claim sets for fuzz_jwt, the files of
# tests/fuzz/NAME/ for fuzz_NAME (fuzz_csv: CSV load files). Corpora grow under
# BUILD_DIR/corpus-*; a crash leaves its input as BUILD_DIR/crash-* and fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
B=${1:-build/fuzz}
secs=${2:-60}
mkdir -p "$B/corpus-mcp" "$B/corpus-jwt"
node tests/fuzz/seeds.mjs "$B"
# A target's seed files kept in tests/fuzz/NAME/ (fuzz_csv: tests/fuzz/csv/) join its corpus.
for t in "$B"/fuzz_*; do
  name=${t##*/fuzz_}
  if [[ -d tests/fuzz/$name ]]; then mkdir -p "$B/corpus-$name" && cp tests/fuzz/"$name"/* "$B/corpus-$name/"; fi
done
rc=0
for t in "$B"/fuzz_*; do
  name=${t##*/fuzz_}
  echo "== $name: ${secs}s"
  if ! "$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$B/crash-$name-" -print_final_stats=1 "$B/corpus-$name" 2>"$B/$name.log"; then
    rc=1
    tail -n 60 "$B/$name.log"
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' "$B/$name.log" || true
done
exit $rc
