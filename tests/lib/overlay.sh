# tests/lib/overlay.sh: for the suites that install the package with dpkg -i in a copy-on-write
# view of this machine's root (tests/install, tests/upgrade): what of the machine itself such an
# install would change if the overlay leaked, read before and compared after. The machine may
# well have the package installed for real: that is said, not taken for a leak.
#   before=$(machine_state); ...dpkg -i in the overlay...; machine_unchanged "$before"
# Needs ok and nok (tests/lib/harness.sh). Not a suite itself.
# shellcheck shell=bash

# The package's system user and group and its files, as this machine has them now.
machine_state() {
  local f
  echo "user: $(getent passwd bikaroo-mcp)"
  echo "group: $(getent group bikaroo-mcp)"
  for f in /usr/bin/bikaroo-mcp /usr/share/bikaroo-mcp /etc/bikaroo-mcp/bikaroo-mcp.env \
    /lib/systemd/system/bikaroo-mcp.service /usr/share/man/man1/bikaroo-mcp.1.gz; do
    if [[ -e $f ]]; then stat -c '%n: inode %i, %s bytes, modified %Y' "$f"; else echo "$f: absent"; fi
  done
}

# machine_unchanged BEFORE: one ok or not ok line comparing machine_state with BEFORE.
machine_unchanged() {
  local now
  now=$(machine_state)
  if [[ $now != "$1" ]]; then
    nok "the machine itself changed while the package was installed in the overlay (the overlay leaked): $(diff <(echo "$1") <(echo "$now") | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
  elif grep -q '^user: bikaroo-mcp:' <<<"$now"; then
    ok "the machine itself is as it was: it has bikaroo-mcp installed for real, and its user and files are untouched by the overlay"
  else
    ok "the machine itself is as it was: no user bikaroo-mcp, none of the package's files"
  fi
}
