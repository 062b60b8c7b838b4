/* Extensions in the protocol core: a row's extension _meta and exclusive rows are shown only to
 * a request whose client declared the extension (per request in 2026-07-28, through the
 * connection's initialize for 2025-era requests); everyone else gets exactly the descriptors of
 * the same description without them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/resources.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

#define EXT_ID "example.test/views"
#define EXT_MIME "text/html;profile=test"
#define DECLARED "{\"extensions\":{\"" EXT_ID "\":{\"mimeTypes\":[\"" EXT_MIME "\"]}}}"

static struct fleet_actor actor = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};

static const struct mcp_ext_meta link = {.extension = EXT_ID,
					 .setting_key = "mimeTypes",
					 .setting_value = EXT_MIME,
					 .meta = "{\"ui\":{\"resourceUri\":\"ui://t/view\"}}"};
static const struct mcp_ext_meta view = {.extension = EXT_ID,
					 .setting_key = "mimeTypes",
					 .setting_value = EXT_MIME,
					 .meta = "{\"ui\":{\"prefersBorder\":true}}",
					 .exclusive = true};

static int ext_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = tools_result("done", NULL, false);
	return 0;
}

static enum resource_status ext_read(struct mcp_ctx *ctx, const char *uri, const char *value,
				     json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)value, (void)err;
	*result = resources_text_result(uri, "text/plain", "x", 1000, false);
	return RESOURCE_OK;
}

#define EXT_TOOL(e)                                                                                \
	{                                                                                          \
		.name = "show", .title = "Show", .description = "Shows.",                          \
		.input_schema = "{\"type\":\"object\"}", .read_only = true, .fn = ext_tool,        \
		.ext = (e)                                                                         \
	}
#define EXT_RESOURCE(e)                                                                            \
	{                                                                                          \
		.uri = "ui://t/view", .name = "view", .mime_type = EXT_MIME, .read = ext_read,     \
		.ext = (e)                                                                         \
	}
#define EXT_TEMPLATE(e)                                                                            \
	{                                                                                          \
		.uri_template = "t://things/{id}", .name = "thing", .mime_type = "text/plain",     \
		.prefix = "t://things/", .var = "id", .suffix = "", .read = ext_read, .ext = (e)   \
	}

static const struct tool_desc tools_with[] = {EXT_TOOL(&link)}, tools_without[] = {EXT_TOOL(NULL)};
static const struct resource_desc res_with[] = {EXT_RESOURCE(&view)};
static const struct resource_template_desc tpl_with[] = {EXT_TEMPLATE(&link)},
					   tpl_without[] = {EXT_TEMPLATE(NULL)};

static struct mcp_server with, without;
static struct mcp_service *with_svc, *without_svc;

static void setup(void)
{
	with = (struct mcp_server){.name = "ext",
				   .version = "1",
				   .tools = tools_with,
				   .ntools = 1,
				   .resources = res_with,
				   .nresources = 1,
				   .templates = tpl_with,
				   .ntemplates = 1,
				   .extensions = "{\"" EXT_ID "\":{}}"};
	without = (struct mcp_server){.name = "ext",
				      .version = "1",
				      .tools = tools_without,
				      .ntools = 1,
				      .templates = tpl_without,
				      .ntemplates = 1};
	with_svc = core_load(&with);
	without_svc = core_load(&without);
}

static void teardown(void)
{
	mcp_service_free(with_svc);
	mcp_service_free(without_svc);
}

/* One request's result (new), or its error object when result is absent. caps: the modern
 * clientCapabilities JSON (NULL: a 2025-06-18 request on a stdio connection whose initialize
 * declared session_ext, which may be NULL). */
static json_t *ask(const struct mcp_service *s, const char *method, const char *params_extra,
		   const char *caps, json_t *session_ext)
{
	char body[1024];
	if (caps)
		snprintf(body, sizeof body,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{%s%s\"_"
			 "meta\":{"
			 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			 "\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
			 method, params_extra, *params_extra ? "," : "", caps);
	else
		snprintf(body, sizeof body,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{%s}}", method,
			 params_extra);
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &actor,
				  .reqid = "ext",
				  .session_version = caps ? NULL : "2025-06-18",
				  .session_extensions = session_ext};
	struct mcp_response out;
	mcp_handle(s, &req, &out);
	json_t *j = json_loads(out.body, 0, NULL);
	mcp_response_free(&out);
	json_t *r = json_incref(json_object_get(j, "result"));
	if (!r)
		r = json_incref(json_object_get(j, "error"));
	json_decref(j);
	json_object_del(r, "_meta"); /* serverInfo: the same for both descriptions */
	return r;
}

START_TEST(undeclared_clients_see_the_description_without_the_extension)
{
	const char *const undeclared[] = {"{}", "{\"extensions\":{}}",
					  /* declared, but without the content type the rows need */
					  "{\"extensions\":{\"" EXT_ID "\":{}}}",
					  "{\"extensions\":{\"" EXT_ID
					  "\":{\"mimeTypes\":[\"text/html\"]}}}",
					  "{\"extensions\":{\"" EXT_ID "\":true}}"};
	const char *const lists[] = {"tools/list", "resources/list", "resources/templates/list"};
	for (size_t i = 0; i < sizeof undeclared / sizeof undeclared[0]; i++)
		for (size_t k = 0; k < 3; k++) {
			json_t *a = ask(with_svc, lists[k], "", undeclared[i], NULL);
			json_t *b = ask(without_svc, lists[k], "", undeclared[i], NULL);
			ck_assert_msg(json_equal(a, b), "%s with %s differs", lists[k],
				      undeclared[i]);
			json_decref(a);
			json_decref(b);
		}
	/* The exclusive row cannot be read either; the same for a 2025-era request. */
	json_t *e = ask(with_svc, "resources/read", "\"uri\":\"ui://t/view\"", "{}", NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")), -32602);
	json_decref(e);
	json_t *l = ask(with_svc, "tools/list", "", NULL, NULL);
	json_t *lw = ask(without_svc, "tools/list", "", NULL, NULL);
	ck_assert(json_equal(l, lw));
	json_decref(l);
	json_decref(lw);
}
END_TEST

START_TEST(declared_clients_see_the_links_and_the_views)
{
	/* Listed to a client that declares nothing first: its list is not the declaring one's. */
	json_decref(ask(with_svc, "tools/list", "", "{}", NULL));
	json_t *t = ask(with_svc, "tools/list", "", DECLARED, NULL);
	json_t *meta = json_object_get(json_array_get(json_object_get(t, "tools"), 0), "_meta");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(meta, "ui"), "resourceUri")),
		"ui://t/view");
	json_decref(t);
	json_t *r = ask(with_svc, "resources/list", "", DECLARED, NULL);
	json_t *row = json_array_get(json_object_get(r, "resources"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(row, "uri")), "ui://t/view");
	ck_assert(json_is_true(json_object_get(json_object_get(json_object_get(row, "_meta"), "ui"),
					       "prefersBorder")));
	json_decref(r);
	json_t *p = ask(with_svc, "resources/templates/list", "", DECLARED, NULL);
	row = json_array_get(json_object_get(p, "resourceTemplates"), 0);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(row, "_meta"), "ui"));
	json_decref(p);
	json_t *rd = ask(with_svc, "resources/read", "\"uri\":\"ui://t/view\"", DECLARED, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(rd, "contents"), 0), "text")),
			 "x");
	json_decref(rd);
	json_t *d = ask(with_svc, "server/discover", "", "{}", NULL);
	ck_assert_ptr_nonnull(json_object_get(
		json_object_get(json_object_get(d, "capabilities"), "extensions"), EXT_ID));
	json_decref(d);
}
END_TEST

START_TEST(a_2025_connection_declares_them_in_initialize)
{
	json_t *decl = json_loads(DECLARED, 0, NULL);
	json_t *t = ask(with_svc, "tools/list", "", NULL, json_object_get(decl, "extensions"));
	json_t *meta = json_object_get(json_array_get(json_object_get(t, "tools"), 0), "_meta");
	ck_assert_ptr_nonnull(json_object_get(meta, "ui"));
	json_decref(t);
	json_decref(decl);
}
END_TEST

START_TEST(malformed_extension_meta_is_refused_at_load)
{
	static const struct mcp_ext_meta bad = {.extension = EXT_ID, .meta = "[1]"};
	static const struct tool_desc t[] = {EXT_TOOL(&bad)};
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_server s = {.name = "bad", .version = "1", .tools = t, .ntools = 1};
	ck_assert_ptr_null(mcp_service_new(&s, &cfg));
	struct mcp_server s2 = {.name = "bad", .version = "1", .extensions = "[]"};
	ck_assert_ptr_null(mcp_service_new(&s2, &cfg));
}
END_TEST

CHECK_SUITE(ext)
{
	Suite *s = suite_create("ext");
	TCase *tc = tcase_create("ext");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, undeclared_clients_see_the_description_without_the_extension);
	tcase_add_test(tc, declared_clients_see_the_links_and_the_views);
	tcase_add_test(tc, a_2025_connection_declares_them_in_initialize);
	tcase_add_test(tc, malformed_extension_meta_is_refused_at_load);
	suite_add_tcase(s, tc);
	return s;
}
