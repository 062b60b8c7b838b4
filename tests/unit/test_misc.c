/* Host/Origin allow-lists, scope parsing, configuration bounds. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/cfg.h"
#include "server/transport/http.h"
#include "server/auth/scopes.h"
#include "tests/conformance/uriset.h"
#include "domain/rights.h"
#include "tests/check_main.h"

START_TEST(host_allow_list)
{
	ck_assert(http_host_allowed("127.0.0.1:8080", ""));
	ck_assert(http_host_allowed("localhost:1", ""));
	ck_assert(http_host_allowed("LOCALHOST", ""));
	ck_assert(http_host_allowed("[::1]:8080", ""));
	ck_assert(http_host_allowed("fleet.bikaroo.example:443", "fleet.bikaroo.example"));
	ck_assert(!http_host_allowed("evil.example.com", ""));
	ck_assert(!http_host_allowed("localhost.evil.example.com", ""));
	ck_assert(!http_host_allowed("127.0.0.1:80x", ""));
	ck_assert(!http_host_allowed("", ""));
	ck_assert(!http_host_allowed(NULL, ""));
	ck_assert(!http_host_allowed("[::1", ""));
}
END_TEST

START_TEST(origin_allow_list)
{
	ck_assert(http_origin_allowed("http://localhost:3000", ""));
	ck_assert(http_origin_allowed("https://127.0.0.1", ""));
	ck_assert(!http_origin_allowed("null", ""));
	ck_assert(!http_origin_allowed("http://evil.example.com", ""));
	ck_assert(!http_origin_allowed("file://localhost", ""));
	ck_assert(!http_origin_allowed("http://localhost/path", ""));
	ck_assert(http_origin_allowed("https://care.bikaroo.example", "care.bikaroo.example, x"));
}
END_TEST

START_TEST(scopes)
{
	ck_assert_uint_eq(scopes_parse("fleet:read"), FLEET_SCOPE_READ);
	ck_assert_uint_eq(scopes_parse("fleet:report  fleet:read openid"),
			  FLEET_SCOPE_READ | FLEET_SCOPE_REPORT);
	ck_assert_uint_eq(scopes_parse("FLEET:READ fleet:readx fleet"), 0);
	ck_assert_uint_eq(scopes_parse(""), 0);
}
END_TEST

START_TEST(perimeter_membership)
{
	ck_assert(rights_in_perimeter("{FR-LYO,FR-PAR}", "FR-PAR"));
	ck_assert(rights_in_perimeter("{FR-LYO,FR-PAR}", "FR-LYO"));
	ck_assert(rights_in_perimeter("{FR-PAR}", "FR-PAR"));
	ck_assert(!rights_in_perimeter("{FR-LYO,FR-PAR}", "FR-PA"));
	ck_assert(!rights_in_perimeter("{FR-LYO,FR-PAR}", "R-PAR"));
	ck_assert(!rights_in_perimeter("{FR-LYO,FR-PAR}", "FR-LYO,FR-PAR"));
	ck_assert(!rights_in_perimeter("{FR-LYO,FR-PAR}", ""));
	ck_assert(!rights_in_perimeter("{}", "FR-PAR"));
	ck_assert(!rights_in_perimeter("", "FR-PAR"));
}
END_TEST

START_TEST(cfg_bounds_and_flags)
{
	struct cfg c;
	char *ok[] = {"serve", "--port=0", "--threads=8", NULL};
	ck_assert_int_eq(cfg_load(&c, 3, ok), CFG_OK);
	ck_assert_int_eq(c.port, 0);
	ck_assert_int_eq(c.threads, 8);
	ck_assert_str_eq(c.listen, "127.0.0.1");
	cfg_free(&c);
	char *bad[] = {"serve", "--threads=0", NULL};
	ck_assert_int_eq(cfg_load(&c, 2, bad), CFG_INVALID);
	cfg_free(&c);
	char *bad2[] = {"serve", "--port=70000", NULL};
	ck_assert_int_eq(cfg_load(&c, 2, bad2), CFG_INVALID);
	cfg_free(&c);
	char *bad3[] = {"serve", "--no-such-flag=1", NULL};
	ck_assert_int_eq(cfg_load(&c, 2, bad3), CFG_INVALID);
	cfg_free(&c);
}
END_TEST

/* A connection's subscriptions: idempotent, bounded, and what is removed is gone. */
START_TEST(uri_set)
{
	static struct uriset s = URISET_INIT;
	ck_assert_int_eq(uriset_change(&s, "bikaroo://fleet/bikes/VL-2048", true), 0);
	ck_assert_int_eq(uriset_change(&s, "bikaroo://fleet/bikes/VL-2048", true), 0);
	ck_assert(uriset_has(&s, "bikaroo://fleet/bikes/VL-2048"));
	ck_assert(!uriset_has(&s, "bikaroo://fleet/bikes/VL-204"));
	char *all[URISET_MAX];
	ck_assert_uint_eq(uriset_copy(&s, all, URISET_MAX), 1); /* added once */
	free(all[0]);
	ck_assert_int_eq(uriset_change(&s, "bikaroo://fleet/bikes/VL-2048", false), 0);
	ck_assert(!uriset_has(&s, "bikaroo://fleet/bikes/VL-2048"));
	ck_assert_int_eq(uriset_change(&s, "never-there", false), 0);
	char uri[64];
	for (int i = 0; i < URISET_MAX; i++) {
		snprintf(uri, sizeof uri, "bikaroo://fleet/bikes/VL-%d", 1000 + i);
		ck_assert_int_eq(uriset_change(&s, uri, true), 0);
	}
	ck_assert_int_eq(uriset_change(&s, "bikaroo://fleet/bikes/VL-9999", true), -1); /* full */
	ck_assert_int_eq(uriset_change(&s, uri, true), 0); /* a member: still fine */
	ck_assert_uint_eq(uriset_copy(&s, all, 3), 3);
	for (int i = 0; i < 3; i++)
		free(all[i]);
	uriset_clear(&s);
	ck_assert_uint_eq(uriset_copy(&s, all, URISET_MAX), 0);
}
END_TEST

CHECK_SUITE(misc)
{
	Suite *s = suite_create("misc");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, host_allow_list);
	tcase_add_test(tc, origin_allow_list);
	tcase_add_test(tc, scopes);
	tcase_add_test(tc, cfg_bounds_and_flags);
	tcase_add_test(tc, perimeter_membership);
	tcase_add_test(tc, uri_set);
	suite_add_tcase(s, tc);
	return s;
}
