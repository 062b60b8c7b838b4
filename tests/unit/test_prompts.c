/* Prompt templates render arguments as literal text; the catalogue answers through mcp_handle()
 * without a database for everything that needs none. */
#include <check.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "server/capabilities/catalog.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/prompts.h"
#include "server/protocol/resources.h"
#include "tests/check_main.h"

/* The product's description, and one with fixture rows after its own. */
static struct mcp_server product, extended;
static struct mcp_service *product_svc, *extended_svc;
static const struct mcp_service *serving;

static struct mcp_service *load(const struct mcp_server *s)
{
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_service *svc = mcp_service_new(s, &cfg);
	ck_assert_ptr_nonnull(svc);
	return svc;
}

static char *render(const char *tpl, const char *args_json)
{
	json_error_t e;
	json_t *args = json_loads(args_json, 0, &e);
	char *out = prompts_render_text(tpl, args);
	json_decref(args);
	return out;
}

START_TEST(placeholders_are_replaced_once_and_literally)
{
	char *s = render(
		"Bike {{bikeId}}: {{symptom}}.",
		"{\"bikeId\":\"VL-2048\",\"symptom\":\"{{bikeId}} {{#symptom}}x{{/symptom}}\"}");
	ck_assert_str_eq(s, "Bike VL-2048: {{bikeId}} {{#symptom}}x{{/symptom}}.");
	free(s);
	s = render("<{{a}}>", "{\"a\":\"<script>alert(1)</script> \\\"quoted\\\"\"}");
	ck_assert_str_eq(s, "<<script>alert(1)</script> \"quoted\">");
	free(s);
}
END_TEST

START_TEST(sections_follow_their_argument)
{
	const char *tpl = "A{{#symptom}} [{{symptom}}]{{/symptom}} B";
	char *s = render(tpl, "{\"symptom\":\"flat\"}");
	ck_assert_str_eq(s, "A [flat] B");
	free(s);
	s = render(tpl, "{}");
	ck_assert_str_eq(s, "A B");
	free(s);
	s = render(tpl, "{\"symptom\":\"\"}");
	ck_assert_str_eq(s, "A B");
	free(s);
}
END_TEST

START_TEST(malformed_templates_are_refused)
{
	const char *bad[] = {"{{a",          "{{#a}}x", "{{#a}}{{#b}}{{/b}}{{/a}}",
			     "{{/a}}",       "{{a b}}", "{{}}",
			     "{{#a}}x{{/b}}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *s = render(bad[i], "{\"a\":\"1\",\"b\":\"2\"}");
		ck_assert_msg(s == NULL, "accepted %s", bad[i]);
	}
}
END_TEST

#define META                                                                                       \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"

static struct fleet_actor actor = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};

static json_t *call(const char *body, const char *session_version)
{
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &actor,
				  .reqid = "unit",
				  .session_version = session_version};
	struct mcp_response out;
	mcp_handle(serving, &req, &out);
	json_error_t e;
	json_t *j = out.body ? json_loads(out.body, 0, &e) : NULL;
	mcp_response_free(&out);
	return j;
}

static void catalogue_setup(void)
{
	ck_assert_int_eq(catalog_describe(&product, NULL), 0);
	product.caller = NULL; /* no database here: the rights are the token's */
	product_svc = load(&product);
	serving = product_svc;
}

static void catalogue_teardown(void)
{
	mcp_service_free(product_svc);
	mcp_server_release(&product);
}

START_TEST(not_found_code_depends_on_the_era)
{
	json_t *m = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"bikaroo://procedures/../../etc/passwd\"," META "}}",
			 NULL);
	json_t *l = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"bikaroo://procedures/../../etc/passwd\"}}",
			 "2025-11-25");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
			 -32602);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "error"), "code")),
			 -32002);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(l, "error"), "data"), "uri")),
			 "bikaroo://procedures/../../etc/passwd");
	json_decref(m);
	json_decref(l);
}
END_TEST

START_TEST(the_procedure_is_served_from_the_loaded_document)
{
	json_t *r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"bikaroo://procedures/damaged-bike\"," META "}}",
			 NULL);
	json_t *c = json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0);
	const char *mime = NULL;
	ck_assert_str_eq(
		json_string_value(json_object_get(c, "text")),
		resources_document(product_svc, "bikaroo://procedures/damaged-bike", &mime));
	ck_assert_str_eq(mime, "text/markdown");
	json_decref(r);
}
END_TEST

START_TEST(prompt_messages_guide_through_the_procedure)
{
	json_t *r = call(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{"
		"\"name\":\"investigate-damaged-bike\",\"arguments\":{\"bikeId\":\"VL-2048\"}," META
		"}}",
		NULL);
	json_t *msgs = json_object_get(json_object_get(r, "result"), "messages");
	ck_assert_int_ge(json_array_size(msgs), 3);
	char all[16384] = "";
	size_t i, o = 0;
	json_t *m;
	json_array_foreach (msgs, i, m) {
		const char *t =
			json_string_value(json_object_get(json_object_get(m, "content"), "text"));
		if (t)
			o += (size_t)snprintf(all + o, sizeof all - o, "%s\n", t);
	}
	ck_assert_ptr_nonnull(strstr(all, "get_bike_status"));
	ck_assert_ptr_nonnull(strstr(all, "report_damaged_bike"));
	ck_assert_ptr_nonnull(strstr(all, "bikaroo://fleet/status-codes"));
	ck_assert_ptr_null(strstr(all, "{{"));
	json_decref(r);
}
END_TEST

/* Fixture rows, as a test-only server registers them. */
static enum resource_status fixture_read(struct mcp_ctx *ctx, const char *uri, const char *value,
					 json_t **result, struct mcp_error *err)
{
	(void)ctx;
	(void)err;
	*result = resources_text_result(uri, "text/plain", value ? value : "static", 0, false);
	return RESOURCE_OK;
}

static struct resource_desc fixture_res[80];
static char fixture_uris[60][32];
static const struct resource_template_desc fixture_tpl[] = {{
	.uri_template = "test://template/{id}/data",
	.name = "t",
	.prefix = "test://template/",
	.var = "id",
	.suffix = "/data",
	.read = fixture_read,
}};

START_TEST(extra_rows_are_listed_page_by_page_and_read)
{
	for (size_t i = 0; i < 60; i++) {
		snprintf(fixture_uris[i], sizeof fixture_uris[i], "test://r/%02zu", i);
		fixture_res[product.nresources + i] = (struct resource_desc){
			.uri = fixture_uris[i], .name = "r", .read = fixture_read};
	}
	for (size_t i = 0; i < product.nresources; i++)
		fixture_res[i] = product.resources[i];
	extended = product;
	extended.resources = fixture_res;
	extended.nresources = product.nresources + 60;
	extended.templates = fixture_tpl;
	extended.ntemplates = 1;
	extended.caller = NULL;
	extended_svc = load(&extended);
	serving = extended_svc;
	size_t seen = 0, pages = 0;
	char cursor[64] = "";
	for (;;) {
		char body[512];
		snprintf(body, sizeof body,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\",\"params\":{"
			 "%s%s%s" META "}}",
			 *cursor ? "\"cursor\":\"" : "", cursor, *cursor ? "\"," : "");
		json_t *r = call(body, NULL);
		json_t *res = json_object_get(r, "result");
		ck_assert_msg(res != NULL, "no result");
		ck_assert_str_eq(json_string_value(json_object_get(res, "cacheScope")), "public");
		seen += json_array_size(json_object_get(res, "resources"));
		pages++;
		const char *next = json_string_value(json_object_get(res, "nextCursor"));
		if (!next) {
			json_decref(r);
			break;
		}
		snprintf(cursor, sizeof cursor, "%s", next);
		json_decref(r);
	}
	/* the product's (but the rows of an extension this client does not declare), then the
	 * fixtures */
	size_t listed = 0;
	for (size_t i = 0; i < product.nresources; i++)
		listed += !product.resources[i].ext || !product.resources[i].ext->exclusive;
	ck_assert_uint_eq(seen, listed + 60);
	ck_assert_uint_eq(pages, 2);
	json_t *r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"test://template/42/data\"," META "}}",
			 NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_array_get(json_object_get(json_object_get(r, "result"), "contents"),
				       0),
			"text")),
		"42");
	json_decref(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{"
		 "\"uri\":\"test://template/4/2/data\"," META "}}",
		 NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "error"), "code")),
			 -32602);
	json_decref(r);
	mcp_service_free(extended_svc);
	serving = product_svc;
}
END_TEST

CHECK_SUITE(prompts)
{
	Suite *s = suite_create("prompts");
	TCase *tc = tcase_create("render");
	tcase_add_test(tc, placeholders_are_replaced_once_and_literally);
	tcase_add_test(tc, sections_follow_their_argument);
	tcase_add_test(tc, malformed_templates_are_refused);
	suite_add_tcase(s, tc);
	TCase *cat = tcase_create("catalogue");
	tcase_add_checked_fixture(cat, catalogue_setup, catalogue_teardown);
	tcase_add_test(cat, not_found_code_depends_on_the_era);
	tcase_add_test(cat, the_procedure_is_served_from_the_loaded_document);
	tcase_add_test(cat, prompt_messages_guide_through_the_procedure);
	tcase_add_test(cat, extra_rows_are_listed_page_by_page_and_read);
	suite_add_tcase(s, cat);
	return s;
}
