/* The fixture tools of the conformance server, as the official suite's scenario descriptions
 * specify them (names, arguments, content, notifications, multi round-trip behaviour). */
#include <string.h>
#include <time.h>

#include "server/protocol/mrtr.h"
#include "server/protocol/notify.h"
#include "server/protocol/resources.h"
#include "uriset.h"
#include "fixtures.h"

/* A 1x1 PNG and a WAV file with an empty data chunk: the smallest valid media. */
#define CONF_PNG                                                                                   \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E" \
	"rkJggg=="
#define CONF_WAV "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

static const char conf_no_args[] = "{\"type\":\"object\",\"additionalProperties\":false}";

/* The suite's json-schema-2020-12 scenario checks that these keywords survive tools/list. */
static const char conf_schema_2020_12[] =
	"{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
	"\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{"
	"\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
	"\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
	"\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
	"\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
	"\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
	"\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
	"\"required\":[\"contactMethod\"]},"
	"\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
	"\"additionalProperties\":false}";

static const char conf_name_schema[] = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
				       "\"string\"}},\"required\":[\"name\"]}";

static void conf_sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	nanosleep(&ts, NULL);
}

static json_t *conf_text(const char *text)
{
	return tools_result(text, NULL, false);
}

/* ---- content ------------------------------------------------------------------------------ */

static int conf_simple_text(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = conf_text("This is a simple text response for testing.");
	return 0;
}

static int conf_image(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "image", "data", CONF_PNG,
			    "mimeType", "image/png");
	return 0;
}

static int conf_audio(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "audio", "data", CONF_WAV,
			    "mimeType", "audio/wav");
	return 0;
}

static int conf_embedded(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}]}", "content", "type", "resource",
			    "resource", "uri", "test://embedded-resource", "mimeType", "text/plain",
			    "text", "This is an embedded resource content.");
	return 0;
}

static int conf_mixed(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result =
		json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:{s:s, s:s, s:s}}]}", "content",
			  "type", "text", "text", "Multiple content types test:", "type", "image",
			  "data", CONF_PNG, "mimeType", "image/png", "type", "resource", "resource",
			  "uri", "test://mixed-content-resource", "mimeType", "application/json",
			  "text", "{\"test\":\"data\",\"value\":123}");
	return 0;
}

static int conf_error(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = tools_result("This tool intentionally returns an error for testing", NULL, true);
	return 0;
}

static int conf_schema_tool(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = conf_text("JSON Schema 2020-12 tool called.");
	return 0;
}

/* ---- notifications ------------------------------------------------------------------------ */

static int conf_progress(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args, (void)err;
	for (int step = 0; step <= 2; step++) {
		if (step)
			conf_sleep_ms(50);
		notify_progress(ctx, step * 50.0, 100, NULL);
	}
	*result = conf_text("Progress tool completed.");
	return 0;
}

static void conf_log3(struct mcp_ctx *ctx)
{
	static const char *const lines[] = {"Tool execution started", "Tool processing data",
					    "Tool execution completed"};
	for (int i = 0; i < 3; i++) {
		if (i)
			conf_sleep_ms(50);
		json_t *data = json_string(lines[i]);
		notify_log(ctx, NOTIFY_INFO, "conformance", data);
		json_decref(data);
	}
}

static int conf_logging(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args, (void)err;
	conf_log3(ctx);
	*result = conf_text("Logging tool completed.");
	return 0;
}

/* ---- multi round-trip requests ----------------------------------------------------------- */

/* Asks for the entries of want (stolen: key -> input request) that this retry has not
 * answered, sealing state (borrowed, may be NULL). Returns 1 when every one is answered, 0
 * with *result (input_required), -1 with *err. */
static int conf_need(struct mcp_ctx *ctx, json_t *want, const json_t *state, json_t **result,
		     struct mcp_error *err)
{
	json_t *ask = json_object();
	const char *key;
	json_t *r;
	json_object_foreach (want, key, r)
		if (!mrtr_response(ctx, key))
			json_object_set(ask, key, r);
	json_decref(want);
	if (json_object_size(ask) == 0) {
		json_decref(ask);
		return 1;
	}
	return mrtr_ask(ctx, ask, state, MRTR_STATE_TTL_S, result, err) == 0 ? 0 : -1;
}

/* The string at response[key].content[field] of an accepted elicitation, or NULL. */
static const char *conf_accepted(struct mcp_ctx *ctx, const char *key, const char *field)
{
	json_t *r = mrtr_response(ctx, key);
	const char *action = json_string_value(json_object_get(r, "action"));
	if (!action || strcmp(action, "accept") != 0)
		return NULL;
	return json_string_value(json_object_get(json_object_get(r, "content"), field));
}

/* True when the verified requestState payload names this step. */
static bool conf_state_is(struct mcp_ctx *ctx, const char *step)
{
	const char *s = json_string_value(json_object_get(mrtr_state(ctx), "step"));
	return s && strcmp(s, step) == 0;
}

static int conf_ir_elicitation(struct mcp_ctx *ctx, json_t *args, json_t **result,
			       struct mcp_error *err)
{
	(void)args;
	int rc = conf_need(ctx,
			   json_pack("{s:o}", "user_name",
				     mrtr_elicit("What is your name?", conf_name_schema)),
			   NULL, result, err);
	if (rc != 1)
		return rc;
	const char *name = conf_accepted(ctx, "user_name", "name");
	char text[200];
	snprintf(text, sizeof text, "Hello, %s!", name ? name : "stranger");
	*result = conf_text(text);
	return 0;
}

static int conf_ir_sampling(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)args;
	int rc = conf_need(ctx,
			   json_pack("{s:o}", "capital_question",
				     mrtr_sample("What is the capital of France?", 100)),
			   NULL, result, err);
	if (rc != 1)
		return rc;
	json_t *r = mrtr_response(ctx, "capital_question");
	const char *answer =
		json_string_value(json_object_get(json_object_get(r, "content"), "text"));
	char text[300];
	snprintf(text, sizeof text, "Sampling response: %s", answer ? answer : "(no text)");
	*result = conf_text(text);
	return 0;
}

static int conf_ir_roots(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args;
	int rc =
		conf_need(ctx, json_pack("{s:o}", "client_roots", mrtr_roots()), NULL, result, err);
	if (rc != 1)
		return rc;
	json_t *roots = json_object_get(mrtr_response(ctx, "client_roots"), "roots");
	const char *first = json_string_value(json_object_get(json_array_get(roots, 0), "uri"));
	char text[300];
	snprintf(text, sizeof text, "Received %zu root(s)%s%s", json_array_size(roots),
		 first ? ", first: " : "", first ? first : "");
	*result = conf_text(text);
	return 0;
}

static int conf_ir_state(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err,
			 const char *step)
{
	(void)args;
	json_t *state = json_pack("{s:s}", "step", step);
	json_t *want =
		json_pack("{s:o}", "confirm",
			  mrtr_elicit("Please confirm",
				      "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":"
				      "\"boolean\"}},\"required\":[\"ok\"]}"));
	int rc;
	if (!conf_state_is(ctx, step)) {
		/* No (or another) state: the first round, whatever responses came along. */
		rc = mrtr_ask(ctx, want, state, MRTR_STATE_TTL_S, result, err);
	} else {
		rc = conf_need(ctx, want, state, result, err);
		if (rc == 1) {
			*result = conf_text("state-ok: the requestState was verified");
			rc = 0;
		}
	}
	json_decref(state);
	return rc;
}

static int conf_ir_request_state(struct mcp_ctx *ctx, json_t *args, json_t **result,
				 struct mcp_error *err)
{
	return conf_ir_state(ctx, args, result, err, "request-state");
}

static int conf_ir_tampered(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	return conf_ir_state(ctx, args, result, err, "tampered-state");
}

static int conf_ir_multiple(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)args;
	json_t *state = json_pack("{s:s}", "step", "multiple");
	json_t *want = json_pack(
		"{s:o, s:o, s:o}", "user_name", mrtr_elicit("What is your name?", conf_name_schema),
		"greeting", mrtr_sample("Generate a greeting", 50), "client_roots", mrtr_roots());
	int rc = conf_state_is(ctx, "multiple")
			 ? conf_need(ctx, want, state, result, err)
			 : mrtr_ask(ctx, want, state, MRTR_STATE_TTL_S, result, err);
	json_decref(state);
	if (rc != 1)
		return rc;
	*result = conf_text("All three inputs received.");
	return 0;
}

static int conf_ir_multi_round(struct mcp_ctx *ctx, json_t *args, json_t **result,
			       struct mcp_error *err)
{
	(void)args;
	const char *name = conf_accepted(ctx, "step1", "name");
	if (conf_state_is(ctx, "round2") && mrtr_response(ctx, "step2")) {
		const char *color = conf_accepted(ctx, "step2", "color");
		const char *who = json_string_value(json_object_get(mrtr_state(ctx), "name"));
		char text[300];
		snprintf(text, sizeof text, "%s likes %s.", who ? who : "Someone",
			 color ? color : "no colour in particular");
		*result = conf_text(text);
		return 0;
	}
	json_t *state;
	json_t *want;
	if (conf_state_is(ctx, "round1") && mrtr_response(ctx, "step1")) {
		state = json_pack("{s:s, s:s}", "step", "round2", "name", name ? name : "Someone");
		want = json_pack(
			"{s:o}", "step2",
			mrtr_elicit("Step 2: What is your favorite color?",
				    "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":"
				    "\"string\"}},\"required\":[\"color\"]}"));
	} else {
		state = json_pack("{s:s}", "step", "round1");
		want = json_pack("{s:o}", "step1",
				 mrtr_elicit("Step 1: What is your name?", conf_name_schema));
	}
	int rc = mrtr_ask(ctx, want, state, MRTR_STATE_TTL_S, result, err);
	json_decref(state);
	return rc;
}

/* Asks only for what the request declared; nothing declared is -32021. */
static int conf_ir_capabilities(struct mcp_ctx *ctx, json_t *args, json_t **result,
				struct mcp_error *err)
{
	(void)args;
	json_t *want = json_object();
	if (mrtr_can_ask(ctx, "elicitation/create"))
		json_object_set_new(want, "user_name",
				    mrtr_elicit("What is your name?", conf_name_schema));
	if (mrtr_can_ask(ctx, "sampling/createMessage"))
		json_object_set_new(want, "greeting", mrtr_sample("Generate a greeting", 50));
	if (mrtr_can_ask(ctx, "roots/list"))
		json_object_set_new(want, "client_roots", mrtr_roots());
	if (json_object_size(want) == 0) {
		json_decref(want);
		return mrtr_missing(err, "sampling");
	}
	int rc = conf_need(ctx, want, NULL, result, err);
	if (rc != 1)
		return rc;
	*result = conf_text("Every declared input was received.");
	return 0;
}

/* server-stateless: needs sampling, which the probe does not declare (-32021, HTTP 400). */
static int conf_missing_capability(struct mcp_ctx *ctx, json_t *args, json_t **result,
				   struct mcp_error *err)
{
	(void)args;
	if (!mrtr_can_ask(ctx, "sampling/createMessage"))
		return mrtr_missing(err, "sampling");
	int rc = conf_need(ctx, json_pack("{s:o}", "answer", mrtr_sample("Say hello", 20)), NULL,
			   result, err);
	if (rc != 1)
		return rc;
	*result = conf_text("Sampling received.");
	return 0;
}

/* server-stateless: the response stream carries only notifications and the result (an
 * input_required asking for an elicitation), never a request. */
static int conf_streaming_elicitation(struct mcp_ctx *ctx, json_t *args, json_t **result,
				      struct mcp_error *err)
{
	(void)args;
	if (!mrtr_can_ask(ctx, "elicitation/create"))
		return mrtr_missing(err, "elicitation");
	notify_progress(ctx, 1, 2, "asking the user");
	int rc = conf_need(ctx,
			   json_pack("{s:o}", "user_name",
				     mrtr_elicit("What is your name?", conf_name_schema)),
			   NULL, result, err);
	if (rc != 1)
		return rc;
	*result = conf_text("Elicitation received.");
	return 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

#define CONF_TOOL(n, t, d, f)                                                                      \
	{                                                                                          \
		.name = n, .title = t, .description = d, .input_schema = conf_no_args,             \
		.read_only = true, .idempotent = true, .fn = f                                     \
	}

static const struct tool_desc conf_tool_rows[] = {
	CONF_TOOL("test_simple_text", "Simple text", "Returns a fixed text.", conf_simple_text),
	CONF_TOOL("test_image_content", "Image", "Returns a 1x1 PNG image.", conf_image),
	CONF_TOOL("test_audio_content", "Audio", "Returns a tiny WAV file.", conf_audio),
	CONF_TOOL("test_embedded_resource", "Embedded resource", "Returns an embedded resource.",
		  conf_embedded),
	CONF_TOOL("test_multiple_content_types", "Mixed content",
		  "Returns text, an image and an embedded resource.", conf_mixed),
	CONF_TOOL("test_error_handling", "Error", "Always returns a tool error.", conf_error),
	CONF_TOOL("test_tool_with_progress", "Progress",
		  "Sends progress 0, 50, 100 of 100 when asked for progress.", conf_progress),
	CONF_TOOL("test_tool_with_logging", "Logging",
		  "Sends three info log messages while it runs.", conf_logging),
	CONF_TOOL("test_logging_tool", "Logging (stateless)",
		  "Logs at info; nothing is sent unless the request set a log level.",
		  conf_logging),
	CONF_TOOL("test_missing_capability", "Needs sampling",
		  "Needs the sampling capability; without it the call is refused with -32021.",
		  conf_missing_capability),
	CONF_TOOL("test_streaming_elicitation", "Streaming elicitation",
		  "Sends a notification, then asks for an elicitation.",
		  conf_streaming_elicitation),
	{.name = "json_schema_2020_12_tool",
	 .title = "JSON Schema 2020-12",
	 .description = "Tool with JSON Schema 2020-12 features",
	 .input_schema = conf_schema_2020_12,
	 .schema_listed_only = true,
	 .read_only = true,
	 .idempotent = true,
	 .fn = conf_schema_tool},
	CONF_TOOL("test_input_required_result_elicitation", "MRTR elicitation",
		  "Asks for the user's name, then greets.", conf_ir_elicitation),
	CONF_TOOL("test_input_required_result_sampling", "MRTR sampling",
		  "Asks for a sampling, then returns its text.", conf_ir_sampling),
	CONF_TOOL("test_input_required_result_list_roots", "MRTR roots",
		  "Asks for the client's roots, then lists them.", conf_ir_roots),
	CONF_TOOL("test_input_required_result_request_state", "MRTR requestState",
		  "Asks for a confirmation with a requestState, then checks it.",
		  conf_ir_request_state),
	CONF_TOOL("test_input_required_result_multiple_inputs", "MRTR multiple inputs",
		  "Asks for an elicitation, a sampling and the roots at once.", conf_ir_multiple),
	CONF_TOOL("test_input_required_result_multi_round", "MRTR multi-round",
		  "Asks twice, with a new requestState each round.", conf_ir_multi_round),
	CONF_TOOL("test_input_required_result_tampered_state", "MRTR tampered state",
		  "Issues an integrity-protected requestState.", conf_ir_tampered),
	CONF_TOOL("test_input_required_result_capabilities", "MRTR capabilities",
		  "Asks only for what the request declared.", conf_ir_capabilities),
};

const struct tool_desc *conf_tools(size_t *n)
{
	*n = sizeof conf_tool_rows / sizeof conf_tool_rows[0];
	return conf_tool_rows;
}

/* ---- subscriptions over HTTP (2025-era resources/subscribe) ------------------------------
 * The suite's scenarios ask for {} and for the subscribed URIs to be tracked; the core checks
 * that the caller can read the resource (server/protocol/resources.c). Over stateless HTTP there
 * is no connection to keep them with, so this fixture keeps them per process; it never sends
 * notifications/resources/updated: its resources do not change. (Over stdio the transport
 * keeps its own, as in the product.) */

static struct uriset conf_subs = URISET_INIT;

static int conf_sub_change(void *ctx, const struct fleet_actor *actor, const char *uri, bool on)
{
	(void)ctx, (void)actor;
	return uriset_change(&conf_subs, uri, on);
}

const struct mcp_subscriptions conf_subscriptions = {conf_sub_change, NULL};

void conf_subscriptions_cleanup(void)
{
	uriset_clear(&conf_subs);
}
