#!/usr/bin/env bash
# dev-token.sh [SUBJECT] [CLIENT] [SCOPES]: prints an access token for the server that
# `BIKAROO_AUTH=jwt make run` started, minted by its test authorization server
# (tests/auth/as.mjs) through a real authorization code + PKCE flow with the resource indicator.
# Any client id works (one the provider does not know is registered with it on the spot): the
# server judges the client application from its database (bikaroo-mcp admin client adds one).
# SUBJECT equal to CLIENT asks for a machine token (client credentials: fleet-sync, ops-batch).
# Development only: the test issuer keeps its keys in memory and forgets them when it stops.
# RUN_PG_DIR (as for scripts/run.sh) says where that make run keeps its state.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
state=$(dirname "${RUN_PG_DIR:-.run/pg}")
sub=${1:-marie}
client=${2:-customer-care-assistant}
scope=${3:-fleet:read fleet:report}
if [[ ! -s $state/as.port || ! -s $state/as.resource ]]; then
  echo "dev-token.sh: no test authorization server is running (start: BIKAROO_AUTH=jwt make run)" >&2
  exit 1
fi
grant=authorization_code
if [[ "$sub" == "$client" ]]; then grant=client_credentials; fi
# shellcheck disable=SC2016  # the JavaScript below is not shell
node -e '
const [port, sub, client, scope, resource, grant] = process.argv.slice(1);
const q = new URLSearchParams({ sub, client, scope, resource, grant });
const said = (why) => { console.error(`dev-token.sh: ${why}`); process.exit(1); };
fetch(`http://127.0.0.1:${port}/mint?${q}`).then(async (r) => {
  const text = await r.text();
  let j;
  try { j = JSON.parse(text); } catch { j = { error: text.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim().slice(0, 300) }; }
  if (!j.access_token) said(`the demo identity provider minted no token for ${sub} via ${client}: ${j.error ?? JSON.stringify(j)}`);
  console.log(j.access_token);
}, (e) => said(`cannot reach the demo identity provider on port ${port} (${e.cause?.code ?? e.message}): is BIKAROO_AUTH=jwt make run still running?`));
' "$(cat "$state/as.port")" "$sub" "$client" "$scope" "$(cat "$state/as.resource")" "$grant"
