#!/usr/bin/env bash
# new-capability.sh NAME read|write: writes a compiling, passing skeleton of a new tool NAME
# (snake_case) for a developer to fill in, and nothing else by hand:
#   migrations/functions/fleet.NAME_for.sql         its SQL function (the work under row-level
#                                                   security as the caller, for any number of keys)
#   server/capabilities/NAME.c                      its capability file: row, governance, audit
#                                                   policy, example, column map, handler
#   server/capabilities/schemas/NAME.{input,output}.json   its JSON Schemas
#   tests/integration/test_NAME.c                   its integration suite (real server, real PostgreSQL)
#   tests/e2e/NAME.test.mjs                         the official client calls it
# and the generated edits: its two lines in server/capabilities/catalog.c, its row in the
# governance table of docs/capabilities.md, its contract in tests/contracts/snapshot.json
# (make contracts, recorded as 0.1.0: in development, its contract may change until it is 1.0.0).
# A read goes through domain/reads.h (its audit row written by its batch's statement). KIND=write
# is being reworked into declared writes: until then a write is written by hand, as
# report_damaged_bike is (server/README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name=${1:-}
kind=${2:-}
die() { echo "new-capability: $*" >&2; exit 2; }
[[ $name =~ ^[a-z][a-z0-9_]{2,40}$ ]] || die "NAME must be snake_case (a-z, 0-9, _; 3 to 41 characters), e.g. list_open_cases"
[[ $kind == read || $kind == write ]] || die "KIND must be read or write"
[[ $kind == read ]] || die "KIND=write is not available while writes become declarations: write its SQL function and capability by hand, as report_damaged_bike (server/capabilities/damage_report.c, migrations/functions/fleet.report_damage_as.sql)"
for f in "migrations/functions/fleet.${name}_for.sql" "server/capabilities/$name.c" \
  "server/capabilities/schemas/$name.input.json" "tests/integration/test_$name.c" "tests/e2e/$name.test.mjs"; do
  [[ -e $f ]] && die "$f exists already"
done
grep -q "\"$name\"" server/capabilities/*.c && die "a row named $name exists already"
title=$(sed -E 's/_/ /g; s/^(.)/\U\1/' <<<"$name")
ident=$(tr -d '_' <<<"$name" | cut -c1-12)

if [[ $kind == read ]]; then
  scope=FLEET_SCOPE_READ scope_name=fleet:read read_only=true roles_c=ADAPTER_GOV_READ_ONLY
  roles_doc="viewer, customer_care, fleet_operator" confirmation_doc="none (read-only)"
else
  scope=FLEET_SCOPE_REPORT scope_name=fleet:report read_only=false
  roles_c='.roles = "customer_care,fleet_operator", .confirmation = "the host confirms with the user"'
  roles_doc="customer_care, fleet_operator" confirmation_doc="the host confirms with the user"
fi

# ---- the SQL function --------------------------------------------------------------------------
sql=migrations/functions/fleet.${name}_for.sql
if [[ $kind == read ]]; then
  cat >"$sql" <<EOF
-- ${name}: for one caller and any number of keys, the rows the caller may see under row-level
-- security (the server calls it through domain/reads.h, in a batch whose statement sets the
-- identity and writes the calls' audit rows; the rights are judged again and every row's region
-- checked against the perimeter in C). One row per visible key, naming its key.
-- Skeleton from make new-capability: it reads bikes; make it read what the tool is for.
CREATE OR REPLACE FUNCTION fleet.${name}_for(p_subject text, p_client text, p_bike_ids text[])
RETURNS TABLE (bike_id text, region text, status text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
SET plan_cache_mode = force_generic_plan
AS \$\$
BEGIN
    IF fleet.current_subject() IS DISTINCT FROM p_subject
       OR fleet.current_client() IS DISTINCT FROM p_client THEN
        PERFORM fleet.act_as(p_subject, p_client);
    END IF;
    RETURN QUERY
    SELECT b.bike_id, b.region, b.status
      FROM fleet.bikes b
     WHERE b.bike_id = ANY (p_bike_ids)
     ORDER BY b.bike_id;
END
\$\$;

REVOKE ALL ON FUNCTION fleet.${name}_for(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.${name}_for(text, text, text[]) TO fleet_app;
EOF
else
  cat >"$sql" <<EOF
-- ${name}: a write in one transaction as the caller under forced row-level security, with its
-- audit row (tool name from the server's catalogue row, p_tool) in the same transaction.
-- Returns one row: the caller's rights, out_outcome (ok | forbidden | not_found), then what
-- the caller may see of the object.
-- Skeleton from make new-capability: it checks the rights and the bike and records the call;
-- put the change itself where it says so.
CREATE OR REPLACE FUNCTION fleet.${name}_as(p_subject text, p_client text, p_bike text,
                                           p_tool text, p_digest text, p_request_id text)
RETURNS TABLE (role text, regions text[], is_human boolean, client_may_read boolean,
               client_may_report boolean, requires_confirmation boolean,
               out_outcome text, bike_id text, region text, status text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS \$\$
DECLARE
    a  fleet.acting;
    bk record;
BEGIN
    a := fleet.act_as(p_subject, p_client);
    IF NOT coalesce(a.role IN ('customer_care', 'fleet_operator') AND a.is_human
                    AND a.client_may_report, false) THEN
        PERFORM fleet.audit_record(p_tool, p_bike, p_digest, 'denied', NULL, p_request_id, NULL);
        RETURN QUERY SELECT a.role, a.regions, a.is_human, a.client_may_read,
                            a.client_may_report, a.requires_confirmation, 'forbidden'::text,
                            NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    SELECT b.bike_id, b.region, b.status INTO bk FROM fleet.bikes b WHERE b.bike_id = p_bike
       FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM fleet.audit_record(p_tool, p_bike, p_digest, 'not_found', NULL, p_request_id,
                                   NULL);
        RETURN QUERY SELECT a.role, a.regions, a.is_human, a.client_may_read,
                            a.client_may_report, a.requires_confirmation, 'not_found'::text,
                            NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    -- The change itself goes here, as the caller (row-level security applies).
    PERFORM fleet.audit_record(p_tool, p_bike, p_digest, 'ok', NULL, p_request_id, NULL);
    RETURN QUERY SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report,
                        a.requires_confirmation, 'ok'::text, bk.bike_id, bk.region, bk.status;
END
\$\$;

REVOKE ALL ON FUNCTION fleet.${name}_as(text, text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.${name}_as(text, text, text, text, text, text) TO fleet_app;
EOF
fi

# ---- the schemas --------------------------------------------------------------------------------
cat >"server/capabilities/schemas/$name.input.json" <<'EOF'
{
  "type": "object",
  "properties": {
    "bikeId": {
      "type": "string",
      "pattern": "^VL-[0-9]{4,6}$",
      "description": "The bike's id as printed on its frame, e.g. VL-2048."
    }
  },
  "required": ["bikeId"],
  "additionalProperties": false
}
EOF
cat >"server/capabilities/schemas/$name.output.json" <<'EOF'
{
  "type": "object",
  "properties": {
    "bikeId": {"type": "string"},
    "region": {"type": "string"},
    "status": {"type": "string", "description": "A code of bikaroo://fleet/status-codes."}
  },
  "required": ["bikeId", "region", "status"]
}
EOF

# ---- the capability file ------------------------------------------------------------------------
cap=server/capabilities/$name.c
if [[ $kind == read ]]; then
  audit_policy='{.target = "bikeId", .self = true}'
  audit_doc='one audit row per call: subject, client, tool, bikeId, argument digest, outcome, request id'
  query_args='.nargs = 1,'
  call_body='	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	const char *bike_id = json_string_value(json_object_get(args, "bikeId"));
	struct '"$name"'_row row;
	size_t n = 0;
	enum fleet_status st =
		reads_run(&'"$name"'_query, ctx->req->actor, bike_id, &call.entry, &row, 1, &n);'
else
  audit_policy='{.target = "bikeId", .self = true}'
  audit_doc='one audit row per call, in the write'"'"'s own transaction: subject, client, tool, bikeId, argument digest, outcome, request id'
  query_args='.nargs = 4,'
  call_body='	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	const char *qargs[4] = {json_string_value(json_object_get(args, "bikeId")),
				ctx->tool->name, call.digest, call.reqid};
	struct '"$name"'_row row;
	size_t n = 0;
	/* The function decides and writes the audit row of every call, in its transaction. */
	enum fleet_status st = reads_run(&'"$name"'_query, ctx->req->actor, qargs, NULL, &row, 1, &n);
	if (st == FLEET_OK && strcmp(row.outcome, "ok") != 0)
		st = strcmp(row.outcome, "forbidden") == 0 ? FLEET_FORBIDDEN : FLEET_NOT_FOUND;'
fi
cat >"$cap" <<EOF
/* ${title}: the tool ${name} (make new-capability wrote this skeleton: describe what it does here,
 * then make the SQL function, the column map and the JSON view say it). */
#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "domain/reads.h"
#include "gen/schemas.h"
#include "server/protocol/tools.h"

/* 0.1.0: in development (its contract may change freely); 1.0.0 once clients rely on it. */
static const struct mcp_governance ${name}_governance = {
	.version = "0.1.0",
	ADAPTER_GOV_STABLE,
	.risk = "low",
	.data = "internal: fleet operations data of the caller's regions, no personal data",
	${roles_c},
	.systems = "postgresql:fleet",
	.audit = "${audit_doc}",
};

/* One row of fleet.${name}_for, its columns in order. */
struct ${name}_row {
$( [[ $kind == write ]] && printf '\tchar outcome[16];\n')	char bike_id[FLEET_BIKE_ID_MAX];
	char region[FLEET_TEXT_MAX];
	char status[FLEET_TEXT_MAX];
};

static const struct reads_column ${name}_columns[] = {
$( [[ $kind == write ]] && printf '\tREADS_COLUMN(struct %s_row, outcome, READS_TEXT, "out_outcome"),\n' "$name")	READS_COLUMN(struct ${name}_row, bike_id, READS_TEXT, "bike_id"),
	READS_COLUMN(struct ${name}_row, region, READS_TEXT, "region"),
	READS_COLUMN(struct ${name}_row, status, READS_TEXT, "status"),
};

static const struct reads_query ${name}_query = {
	.function = "fleet.${name}_for",
	.region_column = "region",
	.key_column = "bike_id",$( [[ $kind == write ]] && printf '\n\t.write = true,')
	.columns = ${name}_columns,
	.ncolumns = MCP_COUNT(${name}_columns),
	.row_size = sizeof(struct ${name}_row),
};

static int ${name}_call(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
${call_body}
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
		return adapter_domain_error(st, err);
	if (st != FLEET_OK) {
		/* Unknown and out of perimeter read alike: no existence oracle. */
		*result = tools_result(st == FLEET_FORBIDDEN
					       ? "You are not permitted to do this with this application."
					       : "Not found among the bikes you can access.",
				       NULL, true);
		return 0;
	}
	*result = adapter_structured(json_pack("{s:s, s:s, s:s}", "bikeId", row.bike_id, "region",
					       row.region, "status", row.status));
	return 0;
}

static const struct tool_desc ${name}_tools[] = {{
	.name = "${name}",
	.title = "${title}",
	.description = "${title} (describe what it does, what it needs and what it returns).",
	.input_schema = schema_${name}_input,
	.output_schema = schema_${name}_output,
	.read_only = ${read_only},
	.destructive = false,
	.idempotent = ${read_only},
	.scope = ${scope},
	.scope_name = "${scope_name}",
	.fn = ${name}_call,
	.audit = ${audit_policy},
	.example = "{\\"bikeId\\":\\"VL-2048\\"}",
	.governance = &${name}_governance,
}};

const struct mcp_capability capability_${name} = {
	.name = "${name}",
	.tools = ${name}_tools,
	.ntools = MCP_COUNT(${name}_tools),
};
EOF
[[ $kind == read ]] && sed -i '/^#include <string.h>$/d' "$cap"

# ---- the catalogue ------------------------------------------------------------------------------
python3 - "$name" <<'EOF'
import re, sys
name = sys.argv[1]
p = "server/capabilities/catalog.c"
s = open(p).read()
decls = list(re.finditer(r"^extern const struct mcp_capability capability_\w+;\n", s, re.M))
s = s[:decls[-1].end()] + "extern const struct mcp_capability capability_%s;\n" % name + s[decls[-1].end():]
m = re.search(r"static const struct mcp_capability \*const catalog\[\] = \{\n(.*?)\n\};", s, re.S)
s = s[:m.end(1)] + "\n\t&capability_%s," % name + s[m.end(1):]
open(p, "w").write(s)
EOF

# ---- the tests ----------------------------------------------------------------------------------
cat >"tests/integration/test_$name.c" <<EOF
/* ${name} against the real server and PostgreSQL: what the caller may see, and nothing else
 * (make new-capability wrote this: add the tool's own cases). The generic suite (test_audit.c)
 * checks its audit rows. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tests/check_main.h"

static void ${ident}_call(const char *subject, const char *bike, struct it_response *r)
{
	char se[128], params[256];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	const char *env[] = {se, NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	snprintf(params, sizeof params,
		 "\\"name\\":\\"${name}\\",\\"arguments\\":{\\"bikeId\\":\\"%s\\"}", bike);
	it_mcp(s.port, "tools/call", "${name}", params, r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}

START_TEST(${ident}_answers_in_the_perimeter_only)
{
	struct it_response r;
	${ident}_call("marie", "VL-2048", &r); /* FR-PAR, marie's region */
	json_t *res = json_object_get(r.json, "result");
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "structuredContent"),
							   "region")),
			 "FR-PAR");
	it_response_free(&r);
	${ident}_call("paul", "VL-2048", &r); /* paul sees FR-LYO only: not found */
	res = json_object_get(r.json, "result");
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_ptr_null(json_object_get(res, "structuredContent"));
	it_response_free(&r);
}
END_TEST

CHECK_SUITE(${name})
{
	Suite *s = suite_create("${name}");
	TCase *tc = tcase_create("perimeter");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ${ident}_answers_in_the_perimeter_only);
	suite_add_tcase(s, tc);
	return s;
}
EOF
cat >"tests/e2e/$name.test.mjs" <<EOF
// ${name} through the official v2 client (make new-capability wrote this: add the tool's own
// cases): listed, and called with its example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const T = { timeout: 20000 };
const REQ = { timeout: 15000 };

test('${name}: listed and answered through the official client', T, async () => {
  const client = new Client({ name: 'e2e-${name}', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL)), REQ);
  try {
    const tools = await client.listTools(undefined, REQ);
    assert.ok(tools.tools.some((t) => t.name === '${name}'));
    const r = await client.callTool({ name: '${name}', arguments: { bikeId: 'VL-2048' } }, undefined, REQ);
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.bikeId, 'VL-2048');
  } finally {
    await client.close();
  }
});
EOF

# ---- the docs' governance table, then the contract --------------------------------------------
python3 - "$name" "$roles_doc" "$confirmation_doc" <<'EOF'
import sys
name, roles, confirmation = sys.argv[1:4]
p = "docs/capabilities.md"
lines = open(p).read().split("\n")
head = next(i for i, l in enumerate(lines) if l.replace(" ", "").startswith("|kind|name|version|"))
end = head + 2
while end < len(lines) and lines[end].lstrip().startswith("|"):
    end += 1
lines.insert(end, "| tool | `%s` | 0.1.0 | low | fleet-operations-platform | %s | %s | stable |"
             % (name, roles, confirmation))
open(p, "w").write("\n".join(lines))
EOF
make -s --no-print-directory format >/dev/null
make -s --no-print-directory contracts

echo "new-capability: $kind tool $name written:"
git status --short | sed 's/^/  /'
echo "Next: make its SQL function, column map and schemas say what the tool is for, then"
echo "  make integration SUITE=$name; make integration SUITE=audit; make e2e FILE=$name"
