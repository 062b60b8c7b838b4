#!/usr/bin/env bash
# host-files.sh [--check]: writes hosts/*.json (all but docker-stdio.json, written by hand) as the
# packaged binary prints them: /usr/bin/bikaroo-mcp host-config HOST, for the database of the
# examples (postgresql://fleet_app@localhost/bikaroo) and the development identity dev via
# developer-ide (fleet:read). `make install PREFIX=/usr` is staged and laid over /usr in a
# private mount namespace (unshare -m: root), so the files name the binary where the package
# puts it. --check compares instead (tests/hosts), and exits 1 naming each file that differs and
# each install link (host-config HOST --link) that docs/hosts.md does not show as a Markdown link.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
make -s --no-print-directory install DESTDIR="$t/stage" PREFIX=/usr UNITDIR=/lib/systemd/system >"$t/install.log" 2>&1 || {
  cat "$t/install.log" >&2
  exit 1
}
# file:HOST pairs.
pairs="vscode-stdio.json:vscode vscode-http.json:vscode-http cursor-stdio.json:cursor cursor-http.json:cursor-http claude-desktop.json:claude-desktop"
unshare -m bash -ec "
  mount --make-rprivate /
  mount -t overlay overlay -o lowerdir=$t/stage/usr:/usr /usr
  for p in $pairs; do
    env -i PATH=/usr/bin:/bin DATABASE_URL=postgresql://fleet_app@localhost/bikaroo BIKAROO_AUTH=local \
      BIKAROO_LOCAL_SUBJECT=dev BIKAROO_LOCAL_CLIENT=developer-ide BIKAROO_LOCAL_SCOPES=fleet:read \
      /usr/bin/bikaroo-mcp host-config \${p#*:} >$t/\${p%%:*}
    case \${p#*:} in claude-desktop) ;; *)
      env -i PATH=/usr/bin:/bin DATABASE_URL=postgresql://fleet_app@localhost/bikaroo BIKAROO_AUTH=local \
        BIKAROO_LOCAL_SUBJECT=dev BIKAROO_LOCAL_CLIENT=developer-ide BIKAROO_LOCAL_SCOPES=fleet:read \
        /usr/bin/bikaroo-mcp host-config \${p#*:} --link >$t/\${p%%:*}.link ;;
    esac
  done"
rc=0
for p in $pairs; do
  f=${p%%:*}
  if [[ ${1:-} == --check ]]; then
    if ! diff -u "hosts/$f" "$t/$f" >"$t/diff"; then
      cat "$t/diff" >&2
      echo "host-files.sh: hosts/$f is not what /usr/bin/bikaroo-mcp host-config ${p#*:} prints (run scripts/host-files.sh)" >&2
      rc=1
    fi
  else
    cp "$t/$f" "hosts/$f"
  fi
done
if [[ ${1:-} != --check ]]; then
  for link in "$t"/*.link; do printf '%s %s\n' "$(basename "$link" .link)" "$(cat "$link")"; done
fi
# docs/hosts.md shows each file's install link (VS Code, Cursor) as the binary prints it.
for link in "$t"/*.link; do
  if ! grep -qF "($(cat "$link"))" docs/hosts.md; then
    echo "host-files.sh: docs/hosts.md lacks the install link of hosts/$(basename "$link" .link): $(cat "$link")" >&2
    rc=1
  fi
done
exit $rc
