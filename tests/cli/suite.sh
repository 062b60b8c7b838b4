#!/usr/bin/env bash
# tests/cli/suite.sh: bikaroo-mcp's help as a new user asks for it. Every command of the usage
# line, and every admin command, asked with --help, -h or help (before or after it) prints its
# usage on stdout and exits 0, reading no setting and touching no database (a settings file that
# does not exist and a database URL that refuses are given); an unknown command asked about
# exits 2, saying so on stderr. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"

# asked WANT ARGS...: bikaroo-mcp ARGS exits 0 with stdout's first line starting "usage:
# bikaroo-mcp WANT", and nothing on stderr.
asked() {
  local want=$1 out rc
  shift
  out=$(env BIKAROO_SETTINGS_FILE=/nonexistent DATABASE_URL=postgresql://nobody@127.0.0.1:1/none \
    timeout 10 "$bin" "$@" 2>"$t/err")
  rc=$?
  if [[ $rc == 0 && $(head -n 1 <<<"$out") == "usage: bikaroo-mcp $want"* && ! -s $t/err ]]; then
    return 0
  fi
  echo "# bikaroo-mcp $*: exit $rc, stdout: $(head -n 2 <<<"$out" | tr '\n' ' ') stderr: $(head -c 300 "$t/err")"
  return 1
}

# unanswered COMMAND...: of each command (a word, or "admin COMMAND") asked as `COMMAND --help`,
# `COMMAND -h` and `help COMMAND`, the forms not answered with its usage (empty when all are).
unanswered() {
  local w f bad='' words
  for w in "$@"; do
    for f in "$w --help" "$w -h" "help $w"; do
      read -ra words <<<"$f"
      asked "$w" "${words[@]}" || bad="$bad [$f]"
    done
  done
  echo "$bad"
}

mapfile -t commands < <("$bin" help | sed -n '1s/^usage: bikaroo-mcp \([^ ]*\) .*/\1/p' | tr '|' '\n' | grep -vx -- --version)
bad=$(unanswered "${commands[@]}")
check "every command's --help, -h and help COMMAND print its usage and exit 0 (${#commands[@]} commands)${bad:+; not:$bad}" \
  test "${#commands[@]}" -gt 5 -a -z "$bad"
check "bikaroo-mcp admin --help prints the admin usage (exit 0)" asked "admin COMMAND" admin --help
check "bikaroo-mcp admin help prints the admin usage (exit 0)" asked "admin COMMAND" admin help
check "bikaroo-mcp host-config help prints its usage and the hosts (exit 0)" \
  asked "host-config HOST" host-config help
mapfile -t admin_cmds < <("$bin" admin help | sed -n 's/^  \([a-z][a-z-]*\) .*/admin \1/p')
bad=$(unanswered "${admin_cmds[@]}")
check "every admin command's help prints its usage and exits 0 (${#admin_cmds[@]} commands)${bad:+; not:$bad}" \
  test "${#admin_cmds[@]}" -gt 5 -a -z "$bad"
check "admin help COMMAND does too" asked "admin region" admin help region
check "serve --help lists the configuration table" \
  grep -q '^BIKAROO_METRICS_LISTEN ' <("$bin" serve --help)

"$bin" help no-such-command >/dev/null 2>"$t/err"
rc=$?
check "help about an unknown command exits 2, naming it on stderr (exit $rc)" \
  test "$rc" = 2 -a -n "$(grep 'unknown command no-such-command' "$t/err")"
"$bin" admin help no-such-command >/dev/null 2>"$t/err"
rc=$?
check "admin help about an unknown admin command exits 2, naming it (exit $rc)" \
  test "$rc" = 2 -a -n "$(grep 'no command no-such-command' "$t/err")"
"$bin" admin >/dev/null 2>"$t/err"
rc=$?
check "admin without a command is still a usage error: the usage on stderr, exit 2 ($rc)" \
  test "$rc" = 2 -a -n "$(grep '^usage: bikaroo-mcp admin' "$t/err")"
suite_exit
