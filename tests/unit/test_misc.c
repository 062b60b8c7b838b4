/* Host/Origin allow-lists, scope parsing, configuration bounds. */
#include <check.h>
#include <stdlib.h>

#include "../../server/cfg.h"
#include "../../server/http.h"
#include "../../server/identity.h"
#include "suites.h"

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
	ck_assert_uint_eq(identity_parse_scopes("fleet:read"), FLEET_SCOPE_READ);
	ck_assert_uint_eq(identity_parse_scopes("fleet:report  fleet:read openid"),
			  FLEET_SCOPE_READ | FLEET_SCOPE_REPORT);
	ck_assert_uint_eq(identity_parse_scopes("FLEET:READ fleet:readx fleet"), 0);
	ck_assert_uint_eq(identity_parse_scopes(""), 0);
}
END_TEST

START_TEST(perimeter_membership)
{
	ck_assert(fleet_in_perimeter("{FR-LYO,FR-PAR}", "FR-PAR"));
	ck_assert(fleet_in_perimeter("{FR-LYO,FR-PAR}", "FR-LYO"));
	ck_assert(fleet_in_perimeter("{FR-PAR}", "FR-PAR"));
	ck_assert(!fleet_in_perimeter("{FR-LYO,FR-PAR}", "FR-PA"));
	ck_assert(!fleet_in_perimeter("{FR-LYO,FR-PAR}", "R-PAR"));
	ck_assert(!fleet_in_perimeter("{FR-LYO,FR-PAR}", "FR-LYO,FR-PAR"));
	ck_assert(!fleet_in_perimeter("{FR-LYO,FR-PAR}", ""));
	ck_assert(!fleet_in_perimeter("{}", "FR-PAR"));
	ck_assert(!fleet_in_perimeter("", "FR-PAR"));
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

Suite *misc_suite(void)
{
	Suite *s = suite_create("misc");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, host_allow_list);
	tcase_add_test(tc, origin_allow_list);
	tcase_add_test(tc, scopes);
	tcase_add_test(tc, cfg_bounds_and_flags);
	tcase_add_test(tc, perimeter_membership);
	suite_add_tcase(s, tc);
	return s;
}
