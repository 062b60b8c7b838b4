/* MRTR and request-scoped notifications through mcp_handle(): what a client relies on when a
 * request needs its input (input_required, sealed requestState, validated retries, -32021) or
 * asked for progress and log messages; and the SSE framing HTTP sends them in. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "fixture.h"
#include "server/protocol/mrtr.h"
#include "server/protocol/notify.h"
#include "server/protocol/reqstate.h"
#include "server/transport/sse.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

static struct fleet_actor marie = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};
static struct fleet_actor paul = {"paul", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				  ""};

/* How long the states ask_tool seals stay valid. */
static long ask_ttl_s = MRTR_STATE_TTL_S;

/* A tool that asks for a confirmation (elicitation) with a requestState, then completes with
 * the nonce of the state it was answered with. */
static int ask_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args;
	json_t *r = mrtr_response(ctx, "confirm");
	if (r && mrtr_state(ctx)) {
		*result = tools_result(mrtr_nonce(ctx), NULL, false);
		return 0;
	}
	ck_assert_ptr_null(mrtr_nonce(ctx));
	json_t *state = json_pack("{s:s}", "step", "confirm");
	int rc = mrtr_ask(ctx,
			  json_pack("{s:o}", "confirm",
				    mrtr_elicit("Confirm?", "{\"type\":\"object\",\"properties\":{"
							    "\"ok\":{\"type\":\"boolean\"}}}")),
			  state, ask_ttl_s, result, err);
	json_decref(state);
	return rc;
}

/* A tool that asks a yes/no question, then says the answer: "yes", "no", or -32602 when the
 * answer is malformed. */
static int yesno_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args;
	switch (mrtr_confirmed(ctx, "sure")) {
	case MRTR_YES: *result = tools_result("yes", NULL, false); return 0;
	case MRTR_NO: *result = tools_result("no", NULL, false); return 0;
	case MRTR_MALFORMED: return mcp_fail(err, MCP_INVALID_PARAMS, "malformed", NULL);
	case MRTR_UNANSWERED: break;
	}
	json_t *state = json_pack("{s:s}", "step", "sure");
	int rc = mrtr_ask(ctx,
			  json_pack("{s:o}", "sure",
				    mrtr_confirmation("sure", "Sure?", "Yes, go", "Tick to go")),
			  state, MRTR_STATE_TTL_S, result, err);
	json_decref(state);
	return rc;
}

/* A tool that reports progress and logs at info and at error. */
static int chatty_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args, (void)err;
	json_t *d = json_string("working");
	notify_progress(ctx, 0, 2, NULL);
	notify_progress(ctx, 0, 2, NULL); /* not increasing: not sent */
	notify_log(ctx, NOTIFY_INFO, "unit", d);
	notify_log(ctx, NOTIFY_ERROR, "unit", d);
	notify_progress(ctx, 2, 2, "done");
	json_decref(d);
	*result = tools_result("done", NULL, false);
	return 0;
}

static const char any_args[] = "{\"type\":\"object\"}";
static const struct tool_desc extra[] = {
	{.name = "ask",
	 .title = "Ask",
	 .description = "asks",
	 .input_schema = any_args,
	 .fn = ask_tool},
	{.name = "chatty",
	 .title = "Chatty",
	 .description = "talks",
	 .input_schema = any_args,
	 .fn = chatty_tool},
	{.name = "yesno",
	 .title = "Yes or no",
	 .description = "asks",
	 .input_schema = any_args,
	 .fn = yesno_tool},
};

/* A method that may not answer input_required, answering it anyway (a bug the core catches). */
static int bad_method(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)params, (void)err;
	*result = json_pack("{s:s, s:{}}", "resultType", "input_required", "inputRequests");
	return 0;
}

static const struct mcp_method extra_methods[] = {
	{"test/bad", MCP_ERA_MODERN, NULL, bad_method, false},
};

static struct mcp_server server;
static struct mcp_service *svc;

static void setup(void)
{
	ask_ttl_s = MRTR_STATE_TTL_S;
	ck_assert_int_eq(reqstate_init("a unit-test secret long enough for the hmac key"), 0);
	svc = core_server(&server, extra, 3, extra_methods, 1);
}

static void teardown(void)
{
	mcp_service_free(svc);
}

struct sink {
	json_t *msgs;
};

static void sink_emit(void *c, const json_t *msg)
{
	json_array_append_new(((struct sink *)c)->msgs, json_deep_copy(msg));
}

/* Calls tool name with extra params (a JSON object text without braces, may be empty) and caps,
 * as actor a; returns the response, the HTTP status and what was emitted (when sink). */
static json_t *call(const struct fleet_actor *a, const char *name, const char *extra_params,
		    const char *caps, const char *meta_extra, int *status, struct sink *sink)
{
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/"
		"call\",\"params\":{\"name\":\"%s\","
		"\"arguments\":{}%s%s,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":%s%s}}}",
		name, *extra_params ? "," : "", extra_params, caps, meta_extra);
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2026-07-28",
				  .h_method = "tools/call",
				  .h_name = name,
				  .actor = a,
				  .reqid = "unit",
				  .emit = sink ? sink_emit : NULL,
				  .emit_ctx = sink};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	*status = out.http_status;
	json_error_t e;
	json_t *j = out.body ? json_loads(out.body, 0, &e) : NULL;
	mcp_response_free(&out);
	free(body);
	return j;
}

static int err_code(json_t *r)
{
	return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

#define ELICIT "{\"elicitation\":{}}"

START_TEST(input_required_then_complete_with_the_sealed_state)
{
	int st;
	json_t *r = call(&marie, "ask", "", ELICIT, "", &st, NULL);
	ck_assert_int_eq(st, 200);
	json_t *res = json_object_get(r, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "input_required");
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(res, "inputRequests"), "confirm"),
				 "method")),
			 "elicitation/create");
	ck_assert_ptr_null(json_object_get(res, "ttlMs"));
	ck_assert_ptr_null(json_object_get(res, "cacheScope"));
	const char *state = json_string_value(json_object_get(res, "requestState"));
	ck_assert_ptr_nonnull(state);
	char *retry = mem_printf("\"inputResponses\":{\"confirm\":{\"action\":\"accept\","
				 "\"content\":{\"ok\":true}}},\"requestState\":\"%s\"",
				 state);
	json_t *r2 = call(&marie, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r2, "result"), "resultType")),
		"complete");
	json_decref(r2);
	/* The same state presented for another request (another tool) is refused. */
	r2 = call(&marie, "chatty", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	json_decref(r2);
	/* The same state presented by another caller is refused. */
	r2 = call(&paul, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	json_decref(r2);
	free(retry);
	/* A tampered state is refused, not treated as absent. */
	retry = mem_printf("\"inputResponses\":{\"confirm\":{\"action\":\"accept\"}},"
			   "\"requestState\":\"%s-TAMPERED\"",
			   state);
	r2 = call(&marie, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	ck_assert_int_eq(st, 200);
	json_decref(r2);
	free(retry);
	json_decref(r);
}
END_TEST

/* The requestState of an ask_tool call (new), after asserting it asked. */
static char *asked_state(int *st)
{
	json_t *r = call(&marie, "ask", "", ELICIT, "", st, NULL);
	json_t *res = json_object_get(r, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "input_required");
	char *state = mem_strdup(json_string_value(json_object_get(res, "requestState")));
	json_decref(r);
	return state;
}

/* The text of ask_tool's answer to the retry with state, or its error's message (new); *code
 * the error's code (0: none). */
static char *answered(const char *state, int *code)
{
	int st;
	char *retry = mem_printf("\"inputResponses\":{\"confirm\":{\"action\":\"accept\"}},"
				 "\"requestState\":\"%s\"",
				 state);
	json_t *r = call(&marie, "ask", retry, ELICIT, "", &st, NULL);
	free(retry);
	*code = err_code(r);
	json_t *text = json_object_get(
		json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0),
		"text");
	if (!text)
		text = json_object_get(json_object_get(r, "error"), "message");
	char *out = mem_strdup(json_string_value(text));
	json_decref(r);
	return out;
}

START_TEST(the_handler_reads_the_nonce_of_the_state_the_core_opened)
{
	int st, code;
	char *one = asked_state(&st), *two = asked_state(&st);
	char *a = answered(one, &code), *again = answered(one, &code), *b = answered(two, &code);
	/* One nonce per question: the same on every retry of it, another for another question. */
	ck_assert_int_eq(code, 0);
	ck_assert_uint_eq(strlen(a), REQSTATE_NONCE_HEX);
	ck_assert_str_eq(a, again);
	ck_assert_str_ne(a, b);
	free(a), free(again), free(b), free(one), free(two);
}
END_TEST

START_TEST(a_state_lives_as_long_as_its_handler_said)
{
	int st, code;
	ask_ttl_s = -1; /* already past: no waiting in a unit test */
	char *state = asked_state(&st);
	char *text = answered(state, &code);
	ck_assert_int_eq(code, -32602);
	ck_assert_str_eq(text, "requestState has expired");
	free(text), free(state);
}
END_TEST

START_TEST(a_form_is_not_asked_of_a_client_that_declared_url_elicitation_only)
{
	int st;
	json_t *r = call(&marie, "ask", "", "{\"elicitation\":{\"url\":{}}}", "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32021);
	json_decref(r);
	r = call(&marie, "ask", "", "{\"elicitation\":{\"form\":{},\"url\":{}}}", "", &st, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r, "result"), "resultType")),
		"input_required");
	json_decref(r);
}
END_TEST

/* What yesno says to answer (an inputResponses.sure member's value), with its state or none. */
static char *yesno(const char *answer, bool with_state)
{
	int st;
	json_t *r = call(&marie, "yesno", "", ELICIT, "", &st, NULL);
	json_t *res = json_object_get(r, "result");
	json_t *form = json_object_get(json_object_get(res, "inputRequests"), "sure");
	json_t *box = json_object_get(
		json_object_get(json_object_get(json_object_get(form, "params"), "requestedSchema"),
				"properties"),
		"sure");
	ck_assert_str_eq(json_string_value(json_object_get(box, "type")), "boolean");
	ck_assert(json_is_false(json_object_get(box, "default")));
	char *retry = mem_printf(
		"\"inputResponses\":{\"sure\":%s}%s%s%s", answer,
		with_state ? ",\"requestState\":\"" : "",
		with_state ? json_string_value(json_object_get(res, "requestState")) : "",
		with_state ? "\"" : "");
	json_decref(r);
	r = call(&marie, "yesno", retry, ELICIT, "", &st, NULL);
	free(retry);
	json_t *text = json_object_get(
		json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0),
		"text");
	char *out = mem_strdup(
		text ? json_string_value(text)
		     : json_string_value(json_object_get(json_object_get(r, "error"), "message")));
	json_decref(r);
	return out;
}

START_TEST(a_confirmation_is_yes_only_when_accepted_ticked_with_its_state)
{
	static const struct {
		const char *answer;
		bool state;
		const char *says;
	} cases[] = {
		{"{\"action\":\"accept\",\"content\":{\"sure\":true}}", true, "yes"},
		{"{\"action\":\"accept\",\"content\":{\"sure\":false}}", true, "no"},
		{"{\"action\":\"accept\"}", true, "no"}, /* the box left unticked */
		{"{\"action\":\"decline\"}", true, "no"},
		{"{\"action\":\"cancel\"}", true, "no"},
		{"{\"action\":\"maybe\"}", true, "malformed"},
		{"{\"action\":\"accept\",\"content\":[true]}", true, "malformed"},
		{"{\"content\":{\"sure\":true}}", true, "malformed"},
		/* An accept without the requestState that asked is no answer to anything. */
		{"{\"action\":\"accept\",\"content\":{\"sure\":true}}", false, "malformed"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *says = yesno(cases[i].answer, cases[i].state);
		ck_assert_msg(strcmp(says, cases[i].says) == 0, "%s%s: %s, not %s", cases[i].answer,
			      cases[i].state ? "" : " (no state)", says, cases[i].says);
		free(says);
	}
}
END_TEST

START_TEST(malformed_input_responses_are_invalid_params)
{
	int st;
	json_t *r = call(&marie, "ask", "\"inputResponses\":null", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
	r = call(&marie, "ask", "\"inputResponses\":{\"confirm\":12345}", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
	r = call(&marie, "ask", "\"requestState\":42", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
}
END_TEST

START_TEST(undeclared_capability_is_32021_with_an_object)
{
	int st;
	json_t *r = call(&marie, "ask", "", "{\"sampling\":{}}", "", &st, NULL);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(err_code(r), -32021);
	json_t *need = json_object_get(json_object_get(json_object_get(r, "error"), "data"),
				       "requiredCapabilities");
	ck_assert(json_is_object(json_object_get(need, "elicitation")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);
}
END_TEST

START_TEST(legacy_clients_are_not_asked)
{
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
			   "\"name\":\"ask\",\"arguments\":{}}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2025-11-25",
				  .actor = &marie,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_error_t e;
	json_t *r = json_loads(out.body, 0, &e);
	json_t *res = json_object_get(r, "result");
	ck_assert(json_is_true(json_object_get(res, "isError")));
	ck_assert_ptr_null(json_object_get(res, "resultType"));
	json_decref(r);
	mcp_response_free(&out);
}
END_TEST

START_TEST(progress_only_with_a_token_and_logs_only_at_the_level)
{
	int st;
	struct sink s = {json_array()};
	json_t *r = call(&marie, "chatty", "", "{}", "", &st, &s);
	ck_assert_uint_eq(json_array_size(s.msgs), 0); /* neither token nor logLevel */
	json_decref(r);
	r = call(&marie, "chatty", "", "{}",
		 ",\"progressToken\":\"p1\",\"io.modelcontextprotocol/logLevel\":\"warning\"", &st,
		 &s);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r, "result"), "resultType")),
		"complete");
	/* progress 0, the error log (info is below warning), progress 2 */
	ck_assert_uint_eq(json_array_size(s.msgs), 3);
	json_t *p0 = json_array_get(s.msgs, 0), *lg = json_array_get(s.msgs, 1),
	       *p2 = json_array_get(s.msgs, 2);
	ck_assert_str_eq(json_string_value(json_object_get(p0, "method")),
			 "notifications/progress");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(p0, "params"), "progressToken")),
		"p1");
	ck_assert_str_eq(json_string_value(json_object_get(lg, "method")), "notifications/message");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(lg, "params"), "level")),
			 "error");
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(p2, "params"), "progress")), 2);
	ck_assert_ptr_null(json_object_get(p2, "id"));
	json_decref(r);
	json_decref(s.msgs);
}
END_TEST

START_TEST(input_required_from_another_method_is_an_internal_error)
{
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"test/bad\",\"params\":{"
			   "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			   "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &marie,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_error_t e;
	json_t *r = json_loads(out.body, 0, &e);
	ck_assert_int_eq(err_code(r), -32603);
	ck_assert_ptr_null(json_object_get(r, "result"));
	json_decref(r);
	mcp_response_free(&out);
}
END_TEST

START_TEST(sse_framing_is_one_event_per_message_response_last)
{
	struct sse_buf b = {0};
	json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/progress");
	sse_emit(&b, n);
	ck_assert_uint_eq(b.events, 1);
	char *body = sse_finish(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	ck_assert_str_eq(body, "event: message\ndata: "
			       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
			       "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
			       "\n\n");
	free(body);
	sse_free(&b);
	json_decref(n);
}
END_TEST

CHECK_SUITE(mrtr)
{
	Suite *s = suite_create("mrtr");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, input_required_then_complete_with_the_sealed_state);
	tcase_add_test(tc, the_handler_reads_the_nonce_of_the_state_the_core_opened);
	tcase_add_test(tc, a_state_lives_as_long_as_its_handler_said);
	tcase_add_test(tc, a_form_is_not_asked_of_a_client_that_declared_url_elicitation_only);
	tcase_add_test(tc, a_confirmation_is_yes_only_when_accepted_ticked_with_its_state);
	tcase_add_test(tc, malformed_input_responses_are_invalid_params);
	tcase_add_test(tc, undeclared_capability_is_32021_with_an_object);
	tcase_add_test(tc, legacy_clients_are_not_asked);
	tcase_add_test(tc, progress_only_with_a_token_and_logs_only_at_the_level);
	tcase_add_test(tc, input_required_from_another_method_is_an_internal_error);
	tcase_add_test(tc, sse_framing_is_one_event_per_message_response_last);
	suite_add_tcase(s, tc);
	return s;
}
