/* The protocol core through mcp_handle(), for paths that need no database. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

static struct fleet_actor actor = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};

#define META                                                                                       \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"

static struct mcp_server server;
static struct mcp_service *svc;

static json_t *handle(enum mcp_transport t, const char *body, const char *hv, const char *hm,
		      int *status, const char **scope)
{
	struct mcp_request req = {.transport = t,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = hv,
				  .h_method = hm,
				  .actor = &actor,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	*status = out.http_status;
	if (scope)
		*scope = out.missing_scope;
	json_error_t e;
	json_t *j = out.body ? json_loads(out.body, 0, &e) : NULL;
	mcp_response_free(&out);
	return j;
}

static void setup(void)
{
	svc = core_server(&server, NULL, 0, NULL, 0);
}

static void teardown(void)
{
	mcp_service_free(svc);
}

START_TEST(discover_shape)
{
	int st;
	json_t *r = handle(
		MCP_TRANSPORT_HTTP,
		"{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/discover\",\"params\":{" META
		"}}",
		"2026-07-28", "server/discover", &st, NULL);
	ck_assert_int_eq(st, 200);
	json_t *res = json_object_get(r, "result");
	ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "d");
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "complete");
	ck_assert_str_eq(
		json_string_value(json_array_get(json_object_get(res, "supportedVersions"), 0)),
		"2026-07-28");
	ck_assert(json_is_integer(json_object_get(res, "ttlMs")));
	ck_assert_str_eq(json_string_value(json_object_get(res, "cacheScope")), "public");
	ck_assert(json_is_object(json_object_get(json_object_get(res, "capabilities"), "tools")));
	json_t *info = json_object_get(json_object_get(res, "_meta"),
				       "io.modelcontextprotocol/serverInfo");
	ck_assert_str_eq(json_string_value(json_object_get(info, "name")), CORE_SERVER_NAME);
	ck_assert_ptr_null(json_object_get(res, "serverInfo"));
	json_decref(r);
}
END_TEST

START_TEST(stdio_needs_no_headers)
{
	int st;
	json_t *r = handle(
		MCP_TRANSPORT_STDIO,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}",
		NULL, NULL, &st, NULL);
	json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
	ck_assert_uint_ge(json_array_size(tools), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
			 CORE_READ_TOOL);
	json_decref(r);
	/* Unknown method on stdio: the error, no HTTP status semantics. */
	r = handle(MCP_TRANSPORT_STDIO,
		   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\",\"params\":{" META "}}", NULL,
		   NULL, &st, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "error"), "code")),
			 -32601);
	json_decref(r);
}
END_TEST

START_TEST(legacy_shapes_follow_the_negotiated_version)
{
	int st;
	json_t *r = handle(MCP_TRANSPORT_HTTP,
			   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", "2025-03-26",
			   NULL, &st, NULL);
	json_t *res = json_object_get(r, "result");
	json_t *tool = json_array_get(json_object_get(res, "tools"), 0);
	ck_assert_ptr_null(json_object_get(res, "resultType"));
	ck_assert_ptr_null(json_object_get(res, "ttlMs"));
	ck_assert_ptr_null(json_object_get(res, "cacheScope"));
	ck_assert_ptr_null(json_object_get(res, "_meta"));
	ck_assert_ptr_null(json_object_get(tool, "outputSchema")); /* 2025-06-18+ only */
	ck_assert_ptr_null(json_object_get(tool, "title"));
	json_decref(r);
	r = handle(MCP_TRANSPORT_HTTP, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
		   "2025-06-18", NULL, &st, NULL);
	tool = json_array_get(json_object_get(json_object_get(r, "result"), "tools"), 0);
	ck_assert_ptr_nonnull(json_object_get(tool, "outputSchema"));
	json_decref(r);
	r = handle(MCP_TRANSPORT_HTTP,
		   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		   "\"protocolVersion\":"
		   "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"x\",\"version\":"
		   "\"1\"}}}",
		   NULL, NULL, &st, NULL);
	res = json_object_get(r, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "protocolVersion")), "2025-06-18");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
		CORE_SERVER_NAME);
	json_decref(r);
}
END_TEST

START_TEST(missing_scope_is_403_on_http_and_in_band_on_stdio)
{
	actor.scopes = 0;
	int st;
	const char *scope = NULL;
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}," META "}}";
	json_t *r = handle(MCP_TRANSPORT_STDIO, body, NULL, NULL, &st, &scope);
	ck_assert_int_eq(st, 200);
	ck_assert_ptr_null(scope);
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_object_get(r, "error"), "data"), "requiredScope")),
		"fleet:read");
	json_decref(r);
	r = handle(MCP_TRANSPORT_STDIO, body, NULL, NULL, &st, &scope);
	json_decref(r);
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2026-07-28",
				  .h_method = "tools/call",
				  .h_name = CORE_READ_TOOL,
				  .actor = &actor,
				  .reqid = "u"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	ck_assert_int_eq(out.http_status, 403);
	ck_assert_str_eq(out.missing_scope, "fleet:read");
	mcp_response_free(&out);
	actor.scopes = FLEET_SCOPE_READ;
}
END_TEST

/* The caller a rights hook states: a role the test changes between two lists. */
static char rights_role[32] = "agent";

static int rights_caller(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err)
{
	(void)ctx, (void)err;
	snprintf(who->role, sizeof who->role, "%s", rights_role);
	return 0;
}

/* The tool names of a tools/list answer (parsed), space-separated with a space at each end, and
 * checks that it answers id. */
static void listed(json_t *r, json_int_t id, char *names, size_t cap)
{
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), id);
	json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
	ck_assert(json_is_array(tools));
	size_t i, at = (size_t)snprintf(names, cap, " ");
	json_t *t;
	json_array_foreach (tools, i, t)
		at += (size_t)snprintf(names + at, cap - at, "%s ",
				       json_string_value(json_object_get(t, "name")));
}

/* A list is serialised once per set of rows the caller may see and sent as text after: a second
 * caller with other rights, or the same one after a change of role or of scopes, gets its own
 * list at once, never the one kept for the first; each answer carries its own request's id. */
START_TEST(a_kept_list_follows_the_callers_rights)
{
	struct tool_desc rows[2] = {
		{.name = "for_agents",
		 .title = "A",
		 .description = "For agents.",
		 .input_schema = "{\"type\":\"object\"}",
		 .roles = "agent,manager"},
		{.name = "for_managers",
		 .title = "M",
		 .description = "For managers.",
		 .input_schema = "{\"type\":\"object\"}",
		 .roles = "manager"},
	};
	struct mcp_server rs;
	struct mcp_service *rsvc = core_server(&rs, rows, 2, NULL, 0);
	mcp_service_free(rsvc);
	rs.caller = rights_caller;
	rsvc = core_load(&rs);
	struct mcp_service *saved = svc;
	svc = rsvc;
	char names[256], again[256];
	int st;
	const char *seq[][2] = {{"agent", " get_bike_status for_agents "},
				{"manager", " get_bike_status for_agents for_managers "},
				{"agent", " get_bike_status for_agents "},
				{"viewer", " get_bike_status "}};
	for (json_int_t n = 0; n < 8; n++) {
		snprintf(rights_role, sizeof rights_role, "%s", seq[n % 4][0]);
		char body[256];
		snprintf(body, sizeof body,
			 "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/list\","
			 "\"params\":{" META "}}",
			 (long long)n);
		json_t *r = handle(MCP_TRANSPORT_HTTP, body, "2026-07-28", "tools/list", &st, NULL);
		ck_assert_int_eq(st, 200);
		listed(r, n, names, sizeof names);
		ck_assert_str_eq(names, seq[n % 4][1]);
		json_decref(r);
	}
	/* Scopes narrowed: the read tool goes, whatever was kept. */
	snprintf(rights_role, sizeof rights_role, "manager");
	actor.scopes = 0;
	json_t *r = handle(
		MCP_TRANSPORT_STDIO,
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{" META "}}",
		NULL, NULL, &st, NULL);
	listed(r, 9, again, sizeof again);
	ck_assert_str_eq(again, " for_agents for_managers ");
	json_decref(r);
	actor.scopes = FLEET_SCOPE_READ;
	/* A cursor that is not one is refused after lists were kept, as before. */
	r = handle(MCP_TRANSPORT_HTTP,
		   "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":{"
		   "\"cursor\":\"bk1.nope\"," META "}}",
		   "2026-07-28", "tools/list", &st, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "error"), "code")),
			 -32602);
	json_decref(r);
	svc = saved;
	mcp_service_free(rsvc);
	snprintf(rights_role, sizeof rights_role, "agent");
}
END_TEST

/* A document with what a writer can get wrong: escapes, a control character, UTF-8, numbers,
 * a null, nesting. */
#define WRITTEN_DOC                                                                                \
	"{\"id\":\"VL-1 \\\"quoted\\\" \\\\ back\\nline\\u0001 \xc3\xa9t\xc3\xa9\",\"n\":-12,"     \
	"\"ok\":true,\"none\":null,\"list\":[1,{\"k\":\"v\"}],\"r\":2.5}"

static int tree_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = tools_result(WRITTEN_DOC, json_loads(WRITTEN_DOC, 0, NULL), false);
	return 0;
}

static int text_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args, (void)err;
	tools_result_text(ctx, WRITTEN_DOC, strlen(WRITTEN_DOC));
	*result = NULL;
	return 0;
}

/* The response body of calling tool in revision v (2026-07-28 with its envelope, else legacy). */
static char *call_body(const char *tool, const char *v)
{
	char body[512];
	bool modern = strcmp(v, "2026-07-28") == 0;
	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"c-7\",\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"%s\",\"arguments\":{}%s}}",
		 tool, modern ? "," META : "");
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = v,
				  .h_method = modern ? "tools/call" : NULL,
				  .h_name = modern ? tool : NULL,
				  .actor = &actor,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	ck_assert_int_eq(out.http_status, 200);
	char *text = strdup(out.body);
	mcp_response_free(&out);
	return text;
}

/* A result written as text (tools_result_text) is answered with exactly the bytes its tree is,
 * in every revision: the text block, structuredContent from 2025-06-18 on, the modern era's
 * resultType and serverInfo. */
START_TEST(a_written_result_is_answered_as_its_tree)
{
	const struct tool_desc rows[2] = {
		{.name = "tree",
		 .title = "T",
		 .description = "Tree.",
		 .input_schema = "{\"type\":\"object\"}",
		 .read_only = true,
		 .fn = tree_tool},
		{.name = "text",
		 .title = "T",
		 .description = "Text.",
		 .input_schema = "{\"type\":\"object\"}",
		 .read_only = true,
		 .fn = text_tool},
	};
	struct mcp_server ws;
	struct mcp_service *saved = svc;
	svc = core_server(&ws, rows, 2, NULL, 0);
	const char *versions[] = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"};
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		char *tree = call_body("tree", versions[i]), *text = call_body("text", versions[i]);
		ck_assert_msg(strstr(tree, "\"isError\":false"), "%s: %s", versions[i], tree);
		ck_assert_msg(strcmp(tree, text) == 0, "%s:\n tree %s\n text %s", versions[i], tree,
			      text);
		free(tree);
		free(text);
	}
	mcp_service_free(svc);
	svc = saved;
}
END_TEST

/* The authority a server acts with ends at its token's exp (a stdio server started with
 * BIKAROO_TOKEN): requests after it are refused, notifications still get no answer. */
START_TEST(expired_authority_is_refused)
{
	struct fleet_actor expired = actor;
	expired.expires_at = (long)time(NULL) - 1;
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{" META
		"}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &expired,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_error_t e;
	json_t *r = json_loads(out.body, 0, &e);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "error"), "code")),
			 -32001);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 3);
	json_decref(r);
	mcp_response_free(&out);
	expired.expires_at = (long)time(NULL) + 600; /* not yet: served */
	mcp_handle(svc, &req, &out);
	ck_assert_ptr_nonnull(strstr(out.body, "\"result\""));
	mcp_response_free(&out);
}
END_TEST

CHECK_SUITE(mcp)
{
	Suite *s = suite_create("mcp");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, discover_shape);
	tcase_add_test(tc, stdio_needs_no_headers);
	tcase_add_test(tc, legacy_shapes_follow_the_negotiated_version);
	tcase_add_test(tc, missing_scope_is_403_on_http_and_in_band_on_stdio);
	tcase_add_test(tc, expired_authority_is_refused);
	tcase_add_test(tc, a_kept_list_follows_the_callers_rights);
	tcase_add_test(tc, a_written_result_is_answered_as_its_tree);
	suite_add_tcase(s, tc);
	return s;
}
