/* The argument validator, and every registered tool schema staying inside its subset. */
#include <check.h>
#include <string.h>

#include "server/protocol/schema.h"
#include "server/capabilities/catalog.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/server.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

static json_t *sch;
static struct schema_set *set;

static void setup(void)
{
	json_error_t e;
	sch = json_loads("{\"type\":\"object\",\"properties\":{"
			 "\"bikeId\":{\"type\":\"string\",\"pattern\":\"^VL-[0-9]{4,6}$\"},"
			 "\"issue\":{\"type\":\"string\",\"enum\":[\"flat_tire\",\"other\"]},"
			 "\"note\":{\"type\":\"string\",\"maxLength\":5},"
			 "\"tag\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":3},"
			 "\"n\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"maximum\":3}},"
			 "\"required\":[\"bikeId\"],\"additionalProperties\":false}",
			 0, &e);
	ck_assert_ptr_nonnull(sch);
	set = schema_set_new();
	ck_assert_int_eq(schema_set_add(set, sch), 0);
}

static void teardown(void)
{
	json_decref(sch);
	schema_set_free(set);
}

static bool valid(const char *text, char *msg)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	ck_assert_ptr_nonnull(v);
	bool ok = schema_validate(set, sch, v, msg, 256);
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
	ck_assert_ptr_nonnull(strstr(msg, "at most 5 characters, got 6"));
	/* Four bytes a character (U+1F6B2): five are 20 bytes and within, six are not. */
	ck_assert(valid("{\"bikeId\":\"VL-2048\",\"note\":\"\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2"
			"\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2\"}",
			msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"note\":\"\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2"
			 "\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2\xf0\x9f\x9a\xb2\"}",
			 msg));
	/* minLength too: one "é" is two bytes and one character, below 2; a JSON escape of a
	 * surrogate pair is one character. */
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"tag\":\"é\"}", msg));
	ck_assert_ptr_nonnull(strstr(msg, "at least 2 characters"));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"tag\":\"\\ud83d\\udeb2\"}", msg));
	ck_assert(valid("{\"bikeId\":\"VL-2048\",\"tag\":\"\\ud83d\\udeb2é\"}", msg));
	ck_assert(valid("{\"bikeId\":\"VL-2048\",\"tag\":\"ééé\"}", msg));
	ck_assert(!valid("{\"bikeId\":\"VL-2048\",\"tag\":\"éééé\"}", msg));
}
END_TEST

START_TEST(registered_schemas_are_supported)
{
	struct mcp_server product;
	ck_assert_int_eq(catalog_describe(&product, NULL), 0);
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_service *svc = mcp_service_new(&product, &cfg);
	ck_assert_ptr_nonnull(svc);
	size_t n = product.ntools;
	const struct tool_desc *t = product.tools;
	ck_assert_uint_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		char msg[256];
		const json_t *in = tools_input_schema(svc, i);
		ck_assert_msg(schema_check(in, msg, sizeof msg), "%s: %s", t[i].name, msg);
		ck_assert_str_eq(json_string_value(json_object_get(in, "type")), "object");
		ck_assert_ptr_nonnull(tools_output_schema(svc, i));
		ck_assert(t[i].fn != NULL && t[i].scope != 0 && t[i].scope_name != NULL);
	}
	mcp_service_free(svc);
	mcp_server_release(&product);
}
END_TEST

/* A keyword the validator does not implement is refused where it stands, never ignored. */
START_TEST(unsupported_keywords_are_refused)
{
	static const char *const bad[][2] = {
		{"{\"type\":\"object\",\"oneOf\":[]}", "/oneOf"},
		{"{\"properties\":{\"a\":{\"type\":\"string\",\"anyOf\":[{}]}}}",
		 "/properties/a/anyOf"},
		{"{\"dependentRequired\":{\"a\":[\"b\"]}}", "/dependentRequired"},
		{"{\"allOf\":[]}", "/allOf"},
		{"{\"allOf\":[{\"uniqueItems\":true}]}", "/allOf/0/uniqueItems"},
		{"{\"not\":{\"minItems\":-1}}", "/not/minItems"},
		{"{\"if\":{\"required\":[\"a\"]}}", "/if"},
		{"{\"then\":{\"required\":[\"a\"]}}", "/then"},
		{"{\"if\":{},\"else\":{\"type\":\"text\"}}", "/else/type"},
		{"{\"items\":{\"uniqueItems\":true}}", "/items/uniqueItems"},
		{"{\"additionalProperties\":true}", "/additionalProperties"},
		{"{\"$ref\":\"#/$defs/none\",\"$defs\":{\"some\":{}}}", "/$ref"},
		{"{\"$ref\":\"https://example.org/s.json\"}", "/$ref"},
		{"{\"items\":{\"$defs\":{\"a\":{}}}}", "/items/$defs"},
		{"{\"minItems\":1.5}", "/minItems"},
		{"{\"type\":\"text\"}", "/type"},
		{"{\"pattern\":\"(\"}", "/pattern"},
		{"{\"maxLength\":-1}", "/maxLength"},
		{"{\"$schema\":\"http://json-schema.org/draft-07/schema#\"}", "/$schema"},
		{"[]", "(root)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char msg[256] = "";
		json_t *s = json_loads(bad[i][0], 0, NULL);
		ck_assert_ptr_nonnull(s);
		ck_assert_msg(!schema_check(s, msg, sizeof msg), "accepted %s", bad[i][0]);
		ck_assert_msg(strstr(msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], msg);
		json_decref(s);
	}
	char msg[256];
	json_t *ok = json_loads("{\"$schema\":\"" SCHEMA_DIALECT "\",\"type\":\"object\","
				"\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":"
				"\"integer\",\"minimum\":0}}},\"additionalProperties\":false}",
				0, NULL);
	ck_assert_msg(schema_check(ok, msg, sizeof msg), "%s", msg);
	json_decref(ok);
}
END_TEST

/* items is enforced on every element, with the element named. */
START_TEST(items_are_validated)
{
	json_t *s = json_loads("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
			       "\"items\":{\"type\":\"integer\",\"minimum\":0}}}}",
			       0, NULL);
	struct schema_set *ss = schema_set_new();
	ck_assert_int_eq(schema_set_add(ss, s), 0);
	char msg[256];
	json_t *good = json_loads("{\"l\":[0,1,2]}", 0, NULL);
	json_t *bad = json_loads("{\"l\":[0,\"x\"]}", 0, NULL);
	json_t *neg = json_loads("{\"l\":[3,-1]}", 0, NULL);
	ck_assert(schema_validate(ss, s, good, msg, sizeof msg));
	ck_assert(!schema_validate(ss, s, bad, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "item 1") && strstr(msg, "integer"), "%s", msg);
	ck_assert(!schema_validate(ss, s, neg, msg, sizeof msg));
	ck_assert_msg(strstr(msg, "item 1") && strstr(msg, "range"), "%s", msg);
	json_decref(good);
	json_decref(bad);
	json_decref(neg);
	json_decref(s);
	schema_set_free(ss);
}
END_TEST

/* The keywords the declarations' own schema uses: $ref into $defs, additionalProperties as the
 * schema of the other members, minItems and maxItems; and a document's messages, by path. */
START_TEST(refs_members_and_documents)
{
	json_t *s = json_loads(
		"{\"type\":\"object\",\"$defs\":{\"word\":{\"type\":\"string\",\"pattern\":"
		"\"^[a-z]+$\"}},\"properties\":{\"roles\":{\"type\":\"array\",\"minItems\":1,"
		"\"maxItems\":2,\"items\":{\"$ref\":\"#/$defs/word\"}},\"words\":{\"type\":"
		"\"object\",\"additionalProperties\":{\"$ref\":\"#/$defs/word\"}}},"
		"\"required\":[\"roles\"],\"additionalProperties\":false}",
		0, NULL);
	char msg[256];
	ck_assert_msg(schema_check(s, msg, sizeof msg), "%s", msg);
	struct schema_set *ss = schema_set_new();
	ck_assert_int_eq(schema_set_add(ss, s), 0);
	static const char *const cases[][2] = {
		{"{\"roles\":[\"a\"],\"words\":{\"x\":\"b\"}}", NULL},
		{"{\"roles\":[]}", "roles: must have at least 1 item, not 0."},
		{"{\"roles\":[\"a\",\"b\",\"c\"]}", "roles: must have at most 2 items, not 3."},
		{"{\"roles\":[\"a\",\"B\"]}", "roles[1]: does not have the expected form"},
		{"{\"roles\":[\"a\"],\"words\":{\"x\":7}}", "words.x: must be of type string"},
		{"{\"roles\":[\"a\"],\"colour\":1}",
		 "top level: unknown field \"colour\" (known: roles, words)"},
		{"{}", "top level: \"roles\" is missing"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *v = json_loads(cases[i][0], 0, NULL);
		bool ok = schema_validate_document(ss, s, v, msg, sizeof msg);
		ck_assert_msg(ok == !cases[i][1], "%s: %s", cases[i][0], ok ? "accepted" : msg);
		ck_assert_msg(ok || strstr(msg, cases[i][1]), "%s: %s", cases[i][0], msg);
		json_decref(v);
	}
	/* A tool's arguments keep their own words. */
	json_t *v = json_loads("{\"roles\":[\"a\"],\"colour\":1}", 0, NULL);
	ck_assert(!schema_validate(ss, s, v, msg, sizeof msg));
	ck_assert_str_eq(msg, "Unexpected argument 'colour': this tool does not take it.");
	json_decref(v);
	/* A $ref that refers to itself ends at the depth limit, refused, never a loop. */
	json_t *loop = json_loads("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":"
				  "\"#/$defs/a\"}",
				  0, NULL);
	ck_assert_msg(schema_check(loop, msg, sizeof msg), "%s", msg);
	ck_assert(!schema_validate(ss, loop, s, msg, sizeof msg));
	ck_assert_ptr_nonnull(strstr(msg, "nested too deeply"));
	json_decref(loop);
	schema_set_free(ss);
	json_decref(s);
}
END_TEST

/* Each of the keywords that say what one member says of another: instances valid (NULL) and
 * not (the whole message: the place, what failed, an allOf entry's description as the rule). */
#define IF_POLICY                                                                                  \
	"{\"allOf\":[{\"description\":\"asks: title; never: none\",\"if\":{\"properties\":{"       \
	"\"policy\":{\"const\":\"never\"}},\"required\":[\"policy\"]},\"then\":{\"properties\":{"  \
	"\"title\":{\"not\":{}}}},\"else\":{\"required\":[\"title\"]}}]}"
#define ALL_OF                                                                                     \
	"{\"allOf\":[{\"required\":[\"a\"]},{\"description\":\"a is two letters or more\","        \
	"\"properties\":{\"a\":{\"minLength\":2}}},{\"properties\":{\"a\":{\"maxLength\":2}}}]}"
#define NOT_BOTH                                                                                   \
	"{\"properties\":{\"x\":{\"not\":{\"minimum\":2}}},\"allOf\":[{\"description\":\"a read "  \
	"or "                                                                                      \
	"a write, not both\",\"not\":{\"required\":[\"read\",\"write\"]}}]}"
#define CONSTS                                                                                     \
	"{\"properties\":{\"r\":{\"const\":\"list\"},\"f\":{\"const\":false},\"o\":{\"const\":{"   \
	"\"a\":[1]}}}}"
#define NESTED                                                                                     \
	"{\"allOf\":[{\"description\":\"outer\",\"allOf\":[{\"description\":\"inner\","            \
	"\"properties\":{\"a\":{\"type\":\"string\"}}},{\"properties\":{\"b\":{\"type\":"          \
	"\"string\"}}}]}]}"
#define LOOP(KW, REST)                                                                             \
	"{\"$defs\":{\"a\":{\"" KW "\":{\"$ref\":\"#/$defs/a\"}" REST "}},\"$ref\":\"#/$defs/a\"}"
static const struct {
	const char *schema, *instance, *want;
} rules[] = {
	{CONSTS, "{\"r\":\"list\",\"f\":false,\"o\":{\"a\":[1]}}", NULL},
	{CONSTS, "{\"r\":\"one\"}", "r: must be \"list\"."},
	{CONSTS, "{\"f\":0}", "f: must be false."},
	{CONSTS, "{\"o\":{\"a\":[2]}}", "o: must be {\"a\":[1]}."},
	{CONSTS, "{\"o\":{\"a\":[1.0]}}", "o: must be {\"a\":[1]}."},
	{ALL_OF, "{\"a\":\"xy\"}", NULL},
	{ALL_OF, "{\"a\":\"x\"}",
	 "a: is too short: at least 2 characters. (a is two letters or more)"},
	{ALL_OF, "{\"a\":\"xyz\"}", "a: is too long: at most 2 characters, got 3."},
	{ALL_OF, "{}", "top level: \"a\" is missing"},
	/* Nested rules: the innermost rule's words only; an entry without words leaves them to the
	 * rule around it. */
	{NESTED, "{\"a\":1}", "a: must be of type string, not integer. (inner)"},
	{NESTED, "{\"b\":1}", "b: must be of type string, not integer. (outer)"},
	{NOT_BOTH, "{\"read\":{}}", NULL},
	{NOT_BOTH, "{\"write\":{},\"x\":1}", NULL},
	{NOT_BOTH, "{\"read\":{},\"write\":{}}",
	 "top level: must not match the \"not\" schema. (a read or a write, not both)"},
	{NOT_BOTH, "{\"x\":2}", "x: must not match the \"not\" schema."},
	{IF_POLICY, "{\"policy\":\"never\"}", NULL},
	{IF_POLICY, "{\"policy\":\"never\",\"title\":\"t\"}",
	 "title: must not match the \"not\" schema. (asks: title; never: none)"},
	{IF_POLICY, "{\"policy\":\"always\",\"title\":\"t\"}", NULL},
	{IF_POLICY, "{\"policy\":\"always\"}",
	 "top level: \"title\" is missing (asks: title; never: none)"},
	{IF_POLICY, "{}", "top level: \"title\" is missing (asks: title; never: none)"},
	/* Only then, only else: the other outcome of if is valid. */
	{"{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0}}", "3", NULL},
	{"{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0}}", "\"s\"", NULL},
	{"{\"if\":{\"type\":\"integer\"},\"then\":{\"minimum\":0}}", "-1",
	 "top level: is out of range."},
	{"{\"if\":{\"type\":\"integer\"},\"else\":{\"minLength\":2}}", "3", NULL},
	{"{\"if\":{\"type\":\"integer\"},\"else\":{\"minLength\":2}}", "\"ab\"", NULL},
	{"{\"if\":{\"type\":\"integer\"},\"else\":{\"minLength\":2}}", "\"a\"",
	 "top level: is too short: at least 2 characters."},
	/* Past the depth limit under "not" or "if" stays refused: the limit is no condition. */
	{LOOP("not", ""), "{}", "top level: are nested too deeply."},
	{LOOP("if", ",\"then\":{}"), "{}", "top level: are nested too deeply."},
};

START_TEST(rules_between_members)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		json_t *s = json_loads(rules[i].schema, 0, NULL);
		json_t *v = json_loads(rules[i].instance, JSON_DECODE_ANY, NULL);
		char msg[256];
		ck_assert_ptr_nonnull(s);
		ck_assert_ptr_nonnull(v);
		ck_assert_msg(schema_check(s, msg, sizeof msg), "%s", msg);
		struct schema_set *ss = schema_set_new();
		ck_assert_int_eq(schema_set_add(ss, s), 0);
		bool ok = schema_validate_document(ss, s, v, msg, sizeof msg);
		ck_assert_msg(ok == !rules[i].want, "%s %s: %s", rules[i].schema, rules[i].instance,
			      ok ? "accepted" : msg);
		ck_assert_msg(ok || strcmp(msg, rules[i].want) == 0, "%s: %s", rules[i].instance,
			      msg);
		schema_set_free(ss);
		json_decref(v);
		json_decref(s);
	}
}
END_TEST

/* A tool's arguments: the new keywords speak of arguments as the others do. */
START_TEST(tool_arguments_under_rules)
{
	json_t *s =
		json_loads("{\"type\":\"object\",\"properties\":{\"kind\":{\"enum\":[\"a\",\"b\"]},"
			   "\"note\":{\"type\":\"string\"}},\"if\":{\"properties\":{\"kind\":{"
			   "\"const\":\"b\"}}},\"then\":{\"required\":[\"note\"]}}",
			   0, NULL);
	struct schema_set *ss = schema_set_new();
	char msg[256];
	ck_assert(schema_check(s, msg, sizeof msg));
	ck_assert_int_eq(schema_set_add(ss, s), 0);
	json_t *a = json_pack("{s:s}", "kind", "a"), *b = json_pack("{s:s}", "kind", "b");
	ck_assert(schema_validate(ss, s, a, msg, sizeof msg));
	ck_assert(!schema_validate(ss, s, b, msg, sizeof msg));
	ck_assert_str_eq(msg, "Missing required argument 'note'.");
	json_decref(a);
	json_decref(b);
	schema_set_free(ss);
	json_decref(s);
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
	tcase_add_test(tc, unsupported_keywords_are_refused);
	tcase_add_test(tc, items_are_validated);
	tcase_add_test(tc, refs_members_and_documents);
	tcase_add_test(tc, rules_between_members);
	tcase_add_test(tc, tool_arguments_under_rules);
	suite_add_tcase(s, tc);
	return s;
}
