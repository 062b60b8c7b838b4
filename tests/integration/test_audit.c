/* Every tools/call leaves exactly one audit row, whatever tool and whatever outcome: this suite
 * walks the catalogue (catalog_describe: every tool row, its scope and its audit policy) and calls
 * each tool over HTTP as the real server serves it, once per outcome, then counts the rows the
 * call left (by its JSON-RPC id) and checks their tool (the row's name: the catalogue, the
 * domain and the SQL function must agree) and target (the argument the row's audit policy
 * names). Arguments, callers and fixture rows come from the row's example (its declaration's
 * "example"). A new tool is covered by being in the catalogue. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "gen/capabilities.h"
#include "server/capabilities/catalog.h"
#include "tests/check_main.h"

/* The outcomes every tool is called for, and who calls. */
enum audit_case { AC_OK, AC_NOT_FOUND, AC_DENIED_TOKEN, AC_DENIED_DB, AC_INVALID, AC_N };
static const char *const audit_outcome[AC_N] = {"ok", "not_found", "denied", "denied", "invalid"};
/* A list shows another caller nothing of the example's objects: its call ends ok (empty). */
#define AUDIT_LIST_OUTCOME "ok"
static const char *const audit_case_name[AC_N] = {
	"ok", "not found (outside the perimeter)", "denied by the token's scopes",
	"denied by the database (unknown subject)", "invalid arguments"};

/* The example's caller (e.g. marie, FR-PAR) owns its objects; its outside caller (paul, FR-LYO,
 * unless the example names another) sees none of them; nobody is no principal at all. */
#define AUDIT_CLIENT "customer-care-assistant"
#define AUDIT_OUTSIDE "paul"
/* Every call declares form elicitation: a tool whose user always confirms on the server's side
 * answers with its question (audited confirmation_required) instead of -32021. */
#define AUDIT_CAPS "{\"elicitation\":{\"form\":{}}}"

/* The example of tool name (capability_examples). */
static const struct capability_example *audit_example_of(const char *name)
{
	for (size_t i = 0; i < capability_nexamples; i++)
		if (strcmp(capability_examples[i].kind, "tool") == 0 &&
		    strcmp(capability_examples[i].name, name) == 0)
			return &capability_examples[i];
	return NULL;
}

/* The example arguments of a tool (new), from its row; NULL, with why, when it has none. */
static json_t *audit_example_args(const struct tool_desc *t, char *why, size_t cap)
{
	json_t *args = t->example ? json_loads(t->example, 0, NULL) : NULL;
	if (!json_is_object(args)) {
		snprintf(
			why, cap,
			"tool %s: its row has no .example (a JSON object of arguments that succeed "
			"on the demo data): give it one in its capability file",
			t->name);
		json_decref(args);
		return NULL;
	}
	return args;
}

/* The scopes a token has when it lacks exactly the tool's. */
static const char *audit_scopes_without(const struct tool_desc *t)
{
	if (t->scope == FLEET_SCOPE_READ)
		return "fleet:report";
	if (t->scope == FLEET_SCOPE_REPORT)
		return "fleet:read";
	return "";
}

static void audit_start(struct it_server *s, const char *subject, const char *client,
			const char *scopes)
{
	char se[128], sc[128], ce[128];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	snprintf(sc, sizeof sc, "BIKAROO_LOCAL_SCOPES=%s", scopes);
	snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", client);
	const char *env[] = {se, sc, ce, NULL};
	ck_assert_int_eq(it_server_start(s, env), 0);
}

/* One tools/call of t with args on port, JSON-RPC id `id`. */
static void audit_call(unsigned port, const struct tool_desc *t, json_t *args, const char *id,
		       struct it_response *r)
{
	char *a = json_dumps(args, JSON_COMPACT);
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"%s\",\"arguments\":%s,\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":" AUDIT_CAPS "}}}",
		id, t->name, a);
	char name[160];
	snprintf(name, sizeof name, "Mcp-Name: %s", t->name);
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 "Mcp-Method: tools/call",
				 name,
				 NULL};
	it_http(port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
	free(a);
}

START_TEST(every_tool_and_outcome_leaves_exactly_one_audit_row)
{
	struct mcp_server product;
	ck_assert_int_eq(catalog_describe(&product, NULL), 0);
	ck_assert_uint_gt(product.ntools, 0);
	struct it_server nobody;
	audit_start(&nobody, "audit-nobody", AUDIT_CLIENT, "fleet:read fleet:report");
	int checked = 0;
	for (size_t i = 0; i < product.ntools; i++) {
		const struct tool_desc *t = &product.tools[i];
		char why[512] = "";
		json_t *example = audit_example_args(t, why, sizeof why);
		ck_assert_msg(example != NULL, "%s", why);
		const struct capability_example *ex = audit_example_of(t->name);
		ck_assert_msg(ex != NULL, "tool %s: no example among the declarations'", t->name);
		struct it_server full, other, limited;
		audit_start(&full, ex->subject, ex->client, "fleet:read fleet:report");
		audit_start(&other, ex->outside_subject ? ex->outside_subject : AUDIT_OUTSIDE,
			    ex->outside_client ? ex->outside_client : AUDIT_CLIENT,
			    "fleet:read fleet:report");
		audit_start(&limited, ex->subject, ex->client, audit_scopes_without(t));
		for (int c = 0; c < AC_N; c++) {
			json_t *args = c == AC_INVALID ? json_pack("{s:i}", "notAnArgument", 1)
						       : json_incref(example);
			unsigned port = c == AC_NOT_FOUND      ? other.port
					: c == AC_DENIED_TOKEN ? limited.port
					: c == AC_DENIED_DB    ? nobody.port
							       : full.port;
			char id[96];
			snprintf(id, sizeof id, "audit-%d-%zu-%d", (int)getpid(), i, c);
			if (ex->fixture) /* the example's objects in the step it succeeds from */
				free(it_sql(ex->fixture));
			struct it_response r;
			audit_call(port, t, args, id, &r);
			ck_assert_msg(r.status == 200 || r.status == 403, "%s %s: HTTP %ld %s",
				      t->name, audit_case_name[c], r.status, r.body);
			const char *rt = json_string_value(
				json_object_get(json_object_get(r.json, "result"), "resultType"));
			const char *outcome = c == AC_OK && rt && strcmp(rt, "input_required") == 0
						      ? "confirmation_required"
						      : audit_outcome[c];
			it_response_free(&r);
			const char *target =
				t->audit.target
					? json_string_value(json_object_get(args, t->audit.target))
					: NULL;
			char *sql = mem_printf(
				"SELECT count(*) || '|' || coalesce(min(tool), '') || '|' || "
				"coalesce(min(target), '') || '|' || coalesce(min(outcome), '') || "
				"'|' "
				"|| count(DISTINCT tool) FROM fleet.audit_log WHERE request_id = "
				"'\"%s\"'",
				id);
			char *row = it_sql(sql);
			char *want =
				mem_printf("1|%s|%s|%s|1", t->name, target ? target : "", outcome);
			char *list = mem_printf("1|%s|%s|%s|1", t->name, target ? target : "",
						AUDIT_LIST_OUTCOME);
			bool matches = row && (strcmp(row, want) == 0 ||
					       (c == AC_NOT_FOUND && strcmp(row, list) == 0));
			free(list);
			ck_assert_msg(matches,
				      "%s, %s: audit rows (count|tool|target|outcome|tools) %s, "
				      "expected %s",
				      t->name, audit_case_name[c], row ? row : "(query failed)",
				      want);
			free(want);
			free(row);
			free(sql);
			json_decref(args);
			checked++;
		}
		ck_assert_int_eq(it_server_stop(&limited), 0);
		ck_assert_int_eq(it_server_stop(&other), 0);
		ck_assert_int_eq(it_server_stop(&full), 0);
		json_decref(example);
	}
	ck_assert_int_eq(checked, (int)product.ntools * AC_N);
	ck_assert_int_eq(it_server_stop(&nobody), 0);
	mcp_server_release(&product);
}
END_TEST

CHECK_SUITE(audit)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("one-row-per-call");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_tool_and_outcome_leaves_exactly_one_audit_row);
	suite_add_tcase(s, tc);
	return s;
}
