/* The argument validator, and every registered tool schema staying inside its subset. */
#include <check.h>
#include <string.h>

#include "server/protocol/schema.h"
#include "server/capabilities/catalog.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

static json_t *sch;

static void setup(void)
{
	json_error_t e;
	sch = json_loads("{\"type\":\"object\",\"properties\":{"
			 "\"bikeId\":{\"type\":\"string\",\"pattern\":\"^VL-[0-9]{4,6}$\"},"
			 "\"issue\":{\"type\":\"string\",\"enum\":[\"flat_tire\",\"other\"]},"
			 "\"note\":{\"type\":\"string\",\"maxLength\":5},"
			 "\"n\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"maximum\":3}},"
			 "\"required\":[\"bikeId\"],\"additionalProperties\":false}",
			 0, &e);
	ck_assert_ptr_nonnull(sch);
	ck_assert_int_eq(schema_prepare(sch), 0);
}

static void teardown(void)
{
	json_decref(sch);
	schema_cleanup();
}

static bool valid(const char *text, char *msg)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	ck_assert_ptr_nonnull(v);
	bool ok = schema_validate(sch, v, msg, 256);
	json_decref(v);
	return ok;
}

START_TEST(accepts_valid)
{
	char msg[256];
	ck_assert(valid("{\"bikeId\":\"VL-2048\"}", msg));
	ck_assert(valid(
		"{\"bikeId\":\"VL-123456\",\"issue\":\"other\",\"note\":\"héllo\",\"n\":null}",
		msg));
	ck_assert(valid("{\"bikeId\":\"VL-2048\",\"n\":3}", msg));
}
END_TEST

START_TEST(rejects_with_actionable_messages)
{
	char msg[256];
	ck_assert(!valid("{}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "bikeId"));
	ck_assert(!valid("{\"bikeId\":\"VL-1\"}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "expected form"));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\\n\"}", msg));
	ck_assert(!valid("{\"bikeId\":2048}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "type string"));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"issue\":\"fire\"}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "flat_tire"));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"note\":\"toolong\"}", msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"n\":4}", msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"n\":1.5}", msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"role\":\"admin\"}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "role"));
}
END_TEST

START_TEST(max_length_counts_characters)
{
	char msg[256];
	/* Five characters, ten bytes: within maxLength 5. */
	ck_assert(valid("{\"bikeId\":\"VL-2048\",\"note\":\"ééééé\"}", msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"note\":\"éééééé\"}", msg));
}
END_TEST

START_TEST(registered_schemas_are_supported)
{
	struct mcp_server product;
	catalog_describe(&product, NULL);
	ck_assert_int_eq(mcp_server_load(&product, "resources", "prompts"), 0);
	size_t n = product.ntools;
	const struct tool_desc *t = product.tools;
	ck_assert_uint_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		const json_t *in = tools_input_schema(&product, i);
		ck_assert_msg(schema_supported(in), "%s uses keywords the validator lacks",
			      t[i].name);
		ck_assert_str_eq(json_string_value(json_object_get(in, "type")), "object");
		ck_assert_ptr_nonnull(tools_output_schema(&product, i));
		ck_assert(t[i].fn != NULL && t[i].scope != 0 && t[i].scope_name != NULL);
	}
	mcp_server_unload(&product);
}
END_TEST

CHECK_SUITE(schema)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, accepts_valid);
	tcase_add_test(tc, rejects_with_actionable_messages);
	tcase_add_test(tc, max_length_counts_characters);
	tcase_add_test(tc, registered_schemas_are_supported);
	suite_add_tcase(s, tc);
	return s;
}
