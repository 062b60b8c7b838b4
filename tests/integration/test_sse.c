/* Request-scoped notifications over HTTP, as a client sees them: the real conformance server
 * (build/conformance-server, the same server/ objects with fixture tools) driven with libcurl.
 * SSE only when notifications exist and Accept admits it; -32021 stays a plain 400. */
#define _GNU_SOURCE /* for strcasestr */
#include <check.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

static struct it_server srv;
static char bin_env[600];

static void setup(void)
{
	char *dir = mem_strdup(it_env("BIKAROO_BIN"));
	snprintf(bin_env, sizeof bin_env, "BIKAROO_BIN=%s/conformance-server", dirname(dir));
	free(dir);
	const char *env[] = {bin_env, NULL};
	ck_assert_int_eq(it_server_start(&srv, env), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(it_server_stop(&srv), 0);
}

/* tools/call of a fixture tool with meta_extra appended to the envelope and caps declared. */
static void call(const char *tool, const char *accept, const char *caps, const char *meta_extra,
		 struct it_response *r)
{
	char nh[200], ah[200];
	snprintf(nh, sizeof nh, "Mcp-Name: %s", tool);
	snprintf(ah, sizeof ah, "Accept: %s", accept);
	const char *headers[] = {
		"Content-Type: application/json", ah, "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: tools/call",         nh, NULL};
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
		"call\",\"params\":{\"name\":\"%s\","
		"\"arguments\":{},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":%s%s}}}",
		tool, caps, meta_extra);
	it_http(srv.port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
}

static bool has_header(const struct it_response *r, const char *line)
{
	return strcasestr(r->headers, line) != NULL;
}

/* Number of SSE events in body whose data contains needle. */
static int count_events(const char *body, const char *needle)
{
	int n = 0;
	for (const char *p = body; (p = strstr(p, "event: message\ndata: ")); p++) {
		const char *end = strstr(p, "\n\n");
		const char *hit = strstr(p, needle);
		if (hit && end && hit < end)
			n++;
	}
	return n;
}

START_TEST(progress_comes_as_sse_events_before_the_response)
{
	struct it_response r;
	call("test_tool_with_progress", "application/json, text/event-stream", "{}",
	     ",\"progressToken\":\"p-7\"", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert(has_header(&r, "Content-Type: text/event-stream"));
	ck_assert(has_header(&r, "X-Accel-Buffering: no"));
	ck_assert(has_header(&r, "Cache-Control: no-cache"));
	ck_assert_int_eq(count_events(r.body, "\"method\":\"notifications/progress\""), 3);
	ck_assert_int_eq(count_events(r.body, "\"progressToken\":\"p-7\""), 3);
	/* The response is the last event, and the stream ends with it. */
	const char *last = strstr(r.body, "\"id\":9");
	ck_assert_ptr_nonnull(last);
	ck_assert_ptr_null(strstr(last, "event: message"));
	ck_assert_str_eq(r.body + strlen(r.body) - 2, "\n\n");
	it_response_free(&r);
}
END_TEST

START_TEST(plain_json_without_a_token_or_without_sse_in_accept)
{
	struct it_response r;
	call("test_tool_with_progress", "application/json, text/event-stream", "{}", "", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert(has_header(&r, "Content-Type: application/json"));
	ck_assert_ptr_nonnull(r.json);
	it_response_free(&r);
	call("test_tool_with_progress", "application/json", "{}", ",\"progressToken\":1", &r);
	ck_assert(has_header(&r, "Content-Type: application/json"));
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r.json, "result"), "resultType")),
		"complete");
	it_response_free(&r);
}
END_TEST

START_TEST(log_messages_only_at_or_above_the_requested_level)
{
	struct it_response r;
	call("test_tool_with_logging", "application/json, text/event-stream", "{}", "", &r);
	ck_assert(has_header(&r, "Content-Type: application/json")); /* no logLevel: no logs */
	it_response_free(&r);
	call("test_tool_with_logging", "application/json, text/event-stream", "{}",
	     ",\"io.modelcontextprotocol/logLevel\":\"warning\"", &r); /* the tool logs at info */
	ck_assert(has_header(&r, "Content-Type: application/json"));
	it_response_free(&r);
	call("test_tool_with_logging", "application/json, text/event-stream", "{}",
	     ",\"io.modelcontextprotocol/logLevel\":\"debug\"", &r);
	ck_assert(has_header(&r, "Content-Type: text/event-stream"));
	ck_assert_int_eq(count_events(r.body, "\"logger\":\"conformance\""), 3);
	/* ...and the core's one message about the call's outcome. */
	ck_assert_int_eq(count_events(r.body, "\"method\":\"notifications/message\""), 4);
	it_response_free(&r);
}
END_TEST

START_TEST(missing_capability_is_a_plain_400)
{
	struct it_response r;
	call("test_missing_capability", "application/json, text/event-stream", "{}", "", &r);
	ck_assert_int_eq(r.status, 400);
	ck_assert(has_header(&r, "Content-Type: application/json"));
	json_t *e = json_object_get(r.json, "error");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")), -32021);
	ck_assert(json_is_object(json_object_get(
		json_object_get(json_object_get(e, "data"), "requiredCapabilities"), "sampling")));
	it_response_free(&r);
}
END_TEST

CHECK_SUITE(sse)
{
	Suite *s = suite_create("sse");
	TCase *tc = tcase_create("conformance-server");
	/* One server for the case (started in the runner, as the other suites do): under
	 * valgrind a start and a stop per test would not fit the timeout. */
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, progress_comes_as_sse_events_before_the_response);
	tcase_add_test(tc, plain_json_without_a_token_or_without_sse_in_accept);
	tcase_add_test(tc, log_messages_only_at_or_above_the_requested_level);
	tcase_add_test(tc, missing_capability_is_a_plain_400);
	suite_add_tcase(s, tc);
	return s;
}
