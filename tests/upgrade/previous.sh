#!/usr/bin/env bash
# previous.sh: builds the previous release (the commit in tests/upgrade/PREVIOUS, the one place
# it is recorded) from git into build/previous-SHORT/src: its bikaroo-mcp and its .deb, once
# (a later run reuses them). Prints the source folder; exits 3 when this checkout does not hold
# the commit (a shallow clone), 1 when the build fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
commit=$(tr -d '[:space:]' <tests/upgrade/PREVIOUS)
git cat-file -e "$commit^{commit}" 2>/dev/null || exit 3
dir=$PWD/build/previous-${commit:0:12}
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9 # two suites (or two make test) building it at once
if [[ ! -x $dir/src/build/bikaroo-mcp || -z $(ls "$dir"/src/build/bikaroo-mcp_*.deb 2>/dev/null) ]]; then
  rm -rf "$dir/src"
  # A clone sharing this repository's objects, at the commit: its own git answers its revision
  # (bikaroo-mcp --version) and its package version, as a checkout of that release would.
  git clone -q --shared --no-checkout "$PWD" "$dir/src"
  git -C "$dir/src" checkout -q --detach "$commit"
  {
    make -C "$dir/src" --no-print-directory -s build/bikaroo-mcp >"$dir/build.log" 2>&1 &&
      make -C "$dir/src" --no-print-directory -s deb >>"$dir/build.log" 2>&1
  } || { tail -n 30 "$dir/build.log" >&2; exit 1; }
fi
echo "$dir/src"
