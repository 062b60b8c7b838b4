#!/usr/bin/env bash
# tests/notify/suite.sh: systemd Type=notify without systemd. The server started with a
# NOTIFY_SOCKET of the test's own (notify.py listens on it) and WATCHDOG_USEC: READY=1 only once
# the database answers, WATCHDOG=1 while the HTTP workers answer and not while they are all
# stuck, STOPPING=1 at SIGTERM.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 tests/notify/notify.py "$t"
