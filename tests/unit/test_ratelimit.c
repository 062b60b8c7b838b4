/* Unit tests of the tools/call volume limits (server/protocol/ratelimit.c): separate read and
 * write budgets per subject, a client application's budget across its subjects. */
#include <check.h>
#include <stdio.h>

#include "server/protocol/ratelimit.h"
#include "tests/check_main.h"

static int rl_admitted(struct ratelimit *rl, const char *subject, const char *client, bool write,
		       int tries)
{
	int n = 0;
	for (int i = 0; i < tries; i++) {
		long wait = 0;
		if (ratelimit_take(rl, subject, client, write, &wait) == RATELIMIT_OK)
			n++;
		else
			ck_assert_int_ge(wait, 1);
	}
	return n;
}

START_TEST(reads_and_writes_have_their_own_budget)
{
	struct ratelimit_settings set = {.read_per_minute = 1,
					 .read_burst = 5,
					 .write_per_minute = 1,
					 .write_burst = 2,
					 .client_factor = 100};
	struct ratelimit *rl = ratelimit_new(&set);
	ck_assert_int_eq(rl_admitted(rl, "marie", "app", true, 10), 2);
	ck_assert_int_eq(rl_admitted(rl, "marie", "app", false, 10), 5);
	/* Another subject has a budget of its own. */
	ck_assert_int_eq(rl_admitted(rl, "paul", "app", true, 10), 2);
	unsigned long r, w;
	ratelimit_counts(rl, &r, &w);
	ck_assert_uint_eq(r, 5);
	ck_assert_uint_eq(w, 16);
	long wait = 0;
	ck_assert_int_eq(ratelimit_take(rl, "marie", "app", true, &wait), RATELIMIT_LIMITED);
	ck_assert_int_ge(wait, 59); /* one a minute */
	ck_assert_int_le(wait, 60);
	ratelimit_free(rl);
}
END_TEST

START_TEST(a_client_application_is_limited_across_its_subjects)
{
	struct ratelimit_settings set = {.read_per_minute = 1,
					 .read_burst = 3,
					 .write_per_minute = 1,
					 .write_burst = 3,
					 .client_factor = 2};
	struct ratelimit *rl = ratelimit_new(&set);
	/* The app may make 6 reads in all, whoever its subjects are. */
	int n = 0;
	for (int i = 0; i < 10; i++) {
		char who[32];
		snprintf(who, sizeof who, "user-%d", i);
		n += rl_admitted(rl, who, "one-app", false, 1);
	}
	ck_assert_int_eq(n, 6);
	ck_assert_int_eq(rl_admitted(rl, "user-0", "other-app", false, 5), 2); /* 3 - 1 spent */
	ratelimit_free(rl);
}
END_TEST

START_TEST(no_limit_when_switched_off)
{
	struct ratelimit_settings set = {.read_burst = 1, .write_burst = 1, .client_factor = 1};
	struct ratelimit *rl = ratelimit_new(&set);
	ck_assert_int_eq(rl_admitted(rl, "marie", "app", true, 100), 100);
	ratelimit_free(rl);
}
END_TEST

CHECK_SUITE(ratelimit)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("buckets");
	tcase_add_test(tc, reads_and_writes_have_their_own_budget);
	tcase_add_test(tc, a_client_application_is_limited_across_its_subjects);
	tcase_add_test(tc, no_limit_when_switched_off);
	suite_add_tcase(s, tc);
	return s;
}
