#!/usr/bin/env bash
# dev-token.sh [SUBJECT] [CLIENT] [SCOPES]: prints an access token for the server that
# `BIKAROO_AUTH=jwt make run` started, minted by its test authorization server
# (tests/auth/as.mjs) through a real authorization code + PKCE flow with the resource indicator.
# SUBJECT equal to CLIENT asks for a machine token (client credentials). Development only: the
# test issuer keeps its keys in memory and forgets them when it stops.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sub=${1:-marie}
client=${2:-customer-care-assistant}
scope=${3:-fleet:read fleet:report}
if [[ ! -s .run/as.port || ! -s .run/as.resource ]]; then
  echo "dev-token.sh: no test authorization server is running (start: BIKAROO_AUTH=jwt make run)" >&2
  exit 1
fi
grant=authorization_code
if [[ "$sub" == "$client" ]]; then grant=client_credentials; fi
# shellcheck disable=SC2016  # the JavaScript below is not shell
node -e '
const [port, sub, client, scope, resource, grant] = process.argv.slice(1);
const q = new URLSearchParams({ sub, client, scope, resource, grant });
fetch(`http://127.0.0.1:${port}/mint?${q}`).then((r) => r.json()).then((j) => {
  if (!j.access_token) { console.error("dev-token.sh:", JSON.stringify(j)); process.exit(1); }
  console.log(j.access_token);
});' "$(cat .run/as.port)" "$sub" "$client" "$scope" "$(cat .run/as.resource)" "$grant"
