/* Cursors are opaque, stable and tamper-evident; pages are deterministic. A tool's list cursor
 * carries its place sealed for one caller, tool and set of arguments. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/protocol/capability.h"
#include "server/protocol/pager.h"
#include "server/protocol/reqstate.h"
#include "tests/check_main.h"

START_TEST(cursor_round_trip)
{
	char buf[32];
	size_t off;
	for (size_t o = 0; o < 5000; o += 37) {
		pager_encode(o, buf, sizeof buf);
		ck_assert_int_eq(pager_decode(buf, &off), 0);
		ck_assert_uint_eq(off, o);
	}
}
END_TEST

START_TEST(cursor_tampering_refused)
{
	char buf[32];
	size_t off;
	pager_encode(50, buf, sizeof buf);
	buf[11] = buf[11] == '1' ? '2' : '1';
	ck_assert_int_ne(pager_decode(buf, &off), 0);
	ck_assert_int_ne(pager_decode("", &off), 0);
	ck_assert_int_ne(pager_decode("bk1.zzzzzzzzzzzz", &off), 0);
	ck_assert_int_ne(pager_decode("bk1.0000003200001", &off), 0);
}
END_TEST

START_TEST(pages_cover_everything_once)
{
	json_t *all = json_array();
	for (int i = 0; i < 120; i++)
		json_array_append_new(all, json_integer(i));
	struct mcp_request req = {0};
	struct mcp_ctx ctx = {.req = &req, .version = "2026-07-28", .modern = true};
	json_t *params = json_object();
	int seen = 0, pages = 0;
	for (;;) {
		json_t *result = NULL;
		struct mcp_error err = {0};
		ck_assert_int_eq(pager_page(&ctx, params, json_deep_copy(all), "items", 1000, true,
					    &result, &err),
				 0);
		json_t *items = json_object_get(result, "items");
		for (size_t i = 0; i < json_array_size(items); i++)
			ck_assert_int_eq(json_integer_value(json_array_get(items, i)), seen++);
		ck_assert_str_eq(json_string_value(json_object_get(result, "cacheScope")),
				 "private");
		pages++;
		json_t *next = json_object_get(result, "nextCursor");
		if (!next) {
			json_decref(result);
			break;
		}
		json_object_set(params, "cursor", next);
		json_decref(result);
	}
	ck_assert_int_eq(seen, 120);
	ck_assert_int_eq(pages, 3);
	json_decref(params);
	json_decref(all);
}
END_TEST

static const struct fleet_actor tom = {"tom", "ops-assistant", FLEET_SCOPE_READ, false, 0, ""};
static const struct fleet_actor nadia = {"nadia", "ops-assistant", FLEET_SCOPE_READ, false, 0, ""};
static const struct tool_desc list_tool = {.name = "list_things"};
static const struct tool_desc other_tool = {.name = "list_others"};

/* The place of the page pager_cursor_query finds in args (JSON text) for who calling tool (new,
 * or NULL without a cursor), and 0; -1 when it refuses the cursor. Its query is args but the
 * cursor, the place, and the limit it was given. */
static int open_as(const struct fleet_actor *who, const struct tool_desc *tool, const char *args,
		   char **place)
{
	struct mcp_request req = {.actor = who};
	struct mcp_ctx ctx = {.req = &req, .tool = tool, .modern = true};
	json_t *a = json_loads(args, 0, NULL);
	ck_assert_ptr_nonnull(a);
	char *text = pager_cursor_query(&ctx, a, 21);
	*place = NULL;
	if (text) {
		json_t *q = json_loads(text, 0, NULL);
		json_t *want = json_copy(a);
		json_object_del(want, "cursor");
		ck_assert(json_equal(json_object_get(q, "arguments"), want));
		ck_assert_int_eq(json_integer_value(json_object_get(q, "limit")), 21);
		const char *after = json_string_value(json_object_get(q, "after"));
		ck_assert(after || json_is_null(json_object_get(q, "after")));
		*place = after ? strdup(after) : NULL;
		json_decref(want);
		json_decref(q);
		free(text);
	}
	json_decref(a);
	return text ? 0 : -1;
}

START_TEST(a_list_cursor_serves_its_own_list_only)
{
	ck_assert_int_eq(reqstate_init("a test secret that is long enough for hmac"), 0);
	struct mcp_request req = {.actor = &tom};
	struct mcp_ctx ctx = {.req = &req, .tool = &list_tool, .modern = true};
	json_t *args = json_pack("{s:s, s:b}", "step", "inspected", "mine", 1);
	char *cursor = pager_cursor_seal(&ctx, args, "2026-12-06T08:01:05.248123Z|IC-1001");
	json_decref(args);
	char *place = NULL;
	char with[4096];
	/* Its own list, in whatever key order, finds the place; no cursor: no place. */
	snprintf(with, sizeof with, "{\"mine\":true,\"cursor\":\"%s\",\"step\":\"inspected\"}",
		 cursor);
	ck_assert_int_eq(open_as(&tom, &list_tool, with, &place), 0);
	ck_assert_str_eq(place, "2026-12-06T08:01:05.248123Z|IC-1001");
	free(place);
	ck_assert_int_eq(open_as(&tom, &list_tool, "{\"step\":\"inspected\"}", &place), 0);
	ck_assert_ptr_null(place);
	/* Another caller, tool or set of arguments; altered; not a string; a requestState. */
	ck_assert_int_eq(open_as(&nadia, &list_tool, with, &place), -1);
	ck_assert_int_eq(open_as(&tom, &other_tool, with, &place), -1);
	snprintf(with, sizeof with, "{\"mine\":false,\"cursor\":\"%s\",\"step\":\"inspected\"}",
		 cursor);
	ck_assert_int_eq(open_as(&tom, &list_tool, with, &place), -1);
	snprintf(with, sizeof with, "{\"cursor\":\"%s\",\"step\":\"inspected\"}", cursor);
	ck_assert_int_eq(open_as(&tom, &list_tool, with, &place), -1);
	cursor[strlen(cursor) / 3] = cursor[strlen(cursor) / 3] == 'A' ? 'B' : 'A';
	snprintf(with, sizeof with, "{\"mine\":true,\"cursor\":\"%s\",\"step\":\"inspected\"}",
		 cursor);
	ck_assert_int_eq(open_as(&tom, &list_tool, with, &place), -1);
	ck_assert_int_eq(open_as(&tom, &list_tool, "{\"cursor\":7}", &place), -1);
	json_t *payload = json_pack("{s:s}", "after", "x");
	char digest[65];
	reqstate_digest(payload, digest);
	char *state = reqstate_seal(&tom, "tools/call", digest, payload, 60, NULL);
	snprintf(with, sizeof with, "{\"cursor\":\"%s\"}", state);
	ck_assert_int_eq(open_as(&tom, &list_tool, with, &place), -1);
	ck_assert_ptr_null(place);
	free(state);
	json_decref(payload);
	free(cursor);
}
END_TEST

CHECK_SUITE(pager)
{
	Suite *s = suite_create("pager");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, cursor_round_trip);
	tcase_add_test(tc, cursor_tampering_refused);
	tcase_add_test(tc, pages_cover_everything_once);
	tcase_add_test(tc, a_list_cursor_serves_its_own_list_only);
	suite_add_tcase(s, tc);
	return s;
}
