/* requestState: sealed here or refused — tampering, other callers, other requests, expiry. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "server/protocol/reqstate.h"
#include "tests/check_main.h"

static const struct fleet_actor marie = {"marie", "careful-assistant", FLEET_SCOPE_REPORT, false, 0,
					 ""};
static const struct fleet_actor paul = {"paul", "careful-assistant", FLEET_SCOPE_REPORT, false, 0,
					""};
static const struct fleet_actor marie_other_app = {
	"marie", "ops-assistant", FLEET_SCOPE_REPORT, false, 0, ""};

static void setup(void)
{
	ck_assert_int_eq(reqstate_init("a test secret that is long enough for hmac"), 0);
}

START_TEST(round_trip_and_binding)
{
	json_t *args = json_pack("{s:s, s:s}", "bikeId", "VL-2048", "issue", "flat_tire");
	char d[65], d2[65];
	reqstate_digest(args, d);
	json_t *p = json_pack("{s:s}", "step", "confirm");
	char nonce[REQSTATE_NONCE_HEX + 1], nonce2[REQSTATE_NONCE_HEX + 1];
	char *s = reqstate_seal(&marie, "tools/call", d, p, 60, nonce);
	json_t *out = NULL;
	ck_assert_int_eq(reqstate_open(s, &marie, "tools/call", d, &out, nonce2), REQSTATE_OK);
	ck_assert(json_equal(out, p));
	ck_assert_str_eq(nonce, nonce2);
	json_decref(out);
	ck_assert_int_eq(reqstate_open(s, &paul, "tools/call", d, &out, NULL),
			 REQSTATE_WRONG_CALLER);
	ck_assert_int_eq(reqstate_open(s, &marie_other_app, "tools/call", d, &out, NULL),
			 REQSTATE_WRONG_CALLER);
	ck_assert_int_eq(reqstate_open(s, &marie, "prompts/get", d, &out, NULL),
			 REQSTATE_WRONG_REQUEST);
	json_object_set_new(args, "bikeId", json_string("VL-2047"));
	reqstate_digest(args, d2);
	ck_assert_int_eq(reqstate_open(s, &marie, "tools/call", d2, &out, NULL),
			 REQSTATE_WRONG_REQUEST);
	ck_assert_ptr_null(out);
	/* Two seals of the same thing differ (fresh nonce). */
	char *s2 = reqstate_seal(&marie, "tools/call", d, p, 60, NULL);
	ck_assert_str_ne(s, s2);
	free(s);
	free(s2);
	json_decref(p);
	json_decref(args);
}
END_TEST

START_TEST(tampering_and_garbage_refused)
{
	char d[65];
	json_t *p = json_object();
	reqstate_digest(p, d);
	char *s = reqstate_seal(&marie, "tools/call", d, p, 60, NULL);
	json_t *out = NULL;
	for (size_t i = 0; i < strlen(s); i += 7) {
		char *t = strdup(s);
		t[i] = t[i] == 'A' ? 'B' : 'A';
		ck_assert_int_ne(reqstate_open(t, &marie, "tools/call", d, &out, NULL),
				 REQSTATE_OK);
		free(t);
	}
	const char *bad[] = {"", ".", "abc", "abc.def", "e30.e30", "..."};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_int_eq(reqstate_open(bad[i], &marie, "tools/call", d, &out, NULL),
				 REQSTATE_MALFORMED);
	ck_assert_int_eq(reqstate_open(NULL, &marie, "tools/call", d, &out, NULL),
			 REQSTATE_MALFORMED);
	/* Another key (another deployment) does not verify. */
	ck_assert_int_eq(reqstate_init("a different secret, also long enough......"), 0);
	ck_assert_int_eq(reqstate_open(s, &marie, "tools/call", d, &out, NULL), REQSTATE_MALFORMED);
	free(s);
	json_decref(p);
}
END_TEST

START_TEST(expiry)
{
	char d[65];
	json_t *p = json_object();
	reqstate_digest(p, d);
	char *s = reqstate_seal(&marie, "tools/call", d, p, -1, NULL);
	json_t *out = NULL;
	ck_assert_int_eq(reqstate_open(s, &marie, "tools/call", d, &out, NULL), REQSTATE_EXPIRED);
	free(s);
	json_decref(p);
}
END_TEST

START_TEST(digest_is_canonical)
{
	json_error_t e;
	json_t *a = json_loads("{\"a\":1,\"b\":\"x\"}", 0, &e);
	json_t *b = json_loads("{ \"b\" : \"x\", \"a\" : 1 }", 0, &e);
	char da[65], db[65];
	reqstate_digest(a, da);
	reqstate_digest(b, db);
	ck_assert_str_eq(da, db);
	ck_assert_uint_eq(strlen(da), 64);
	json_decref(a);
	json_decref(b);
}
END_TEST

CHECK_SUITE(reqstate)
{
	Suite *s = suite_create("reqstate");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, round_trip_and_binding);
	tcase_add_test(tc, tampering_and_garbage_refused);
	tcase_add_test(tc, expiry);
	tcase_add_test(tc, digest_is_canonical);
	suite_add_tcase(s, tc);
	return s;
}
