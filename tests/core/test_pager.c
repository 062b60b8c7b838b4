/* Cursors are opaque, stable and tamper-evident; pages are deterministic. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "server/protocol/pager.h"
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

CHECK_SUITE(pager)
{
	Suite *s = suite_create("pager");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, cursor_round_trip);
	tcase_add_test(tc, cursor_tampering_refused);
	tcase_add_test(tc, pages_cover_everything_once);
	suite_add_tcase(s, tc);
	return s;
}
