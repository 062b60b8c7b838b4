/* Unit tests of the tools/call volume limits (server/protocol/ratelimit.c): separate read and
 * write budgets per subject, a client application's budget across its subjects; with a budget
 * store, limiters of several instances sharing one budget through leases, and the fall-back to
 * their own buckets when the store fails. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/metrics.h"
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

/* A budget store of the test's own, in memory: the shared buckets of several limiters (the
 * instances of a deployment), with the store's contract (each lease up to its want, as many
 * whole tokens as the bucket holds). Refill is ignored: the tests run within a second at rates
 * of one a minute. fail: every take fails (the database unreachable). */
struct test_store {
	struct {
		char key[80];
		double level;
	} b[64];
	size_t n;
	int calls;
	bool fail;
};

static int test_store_take(void *ctx, struct fleet_budget_lease *l, size_t n)
{
	struct test_store *ts = ctx;
	ts->calls++;
	if (ts->fail)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char key[80];
		snprintf(key, sizeof key, "%d%d%s", l[i].client, l[i].write, l[i].holder);
		size_t k;
		for (k = 0; k < ts->n && strcmp(ts->b[k].key, key) != 0; k++)
			;
		if (k == ts->n) {
			ck_assert_uint_lt(ts->n, sizeof ts->b / sizeof ts->b[0]);
			snprintf(ts->b[ts->n].key, sizeof ts->b[0].key, "%s", key);
			ts->b[ts->n++].level = l[i].burst;
		}
		long g = (long)ts->b[k].level < l[i].want ? (long)ts->b[k].level : l[i].want;
		ts->b[k].level -= (double)g;
		l[i].granted = g;
		l[i].level = ts->b[k].level;
	}
	return 0;
}

/* Three instances with one store grant one budget between them, whichever gets the calls; the
 * leases cost a store call per lease, not per call, and a refusal costs none. */
START_TEST(instances_with_a_store_share_one_budget)
{
	struct test_store ts = {0};
	struct ratelimit_store store = {test_store_take, &ts};
	struct ratelimit_settings set = {.read_per_minute = 1,
					 .read_burst = 50,
					 .write_per_minute = 1,
					 .write_burst = 50,
					 .client_factor = 10,
					 .store = &store};
	struct ratelimit *rl[3] = {ratelimit_new(&set), ratelimit_new(&set), ratelimit_new(&set)};
	int n = 0;
	for (int i = 0; i < 300; i++)
		n += rl_admitted(rl[i % 3], "marie", "app", false, 1);
	ck_assert_int_eq(n, 50);
	/* Leases of 50 / 8 = 6: about 50 / 6 calls for the subject's budget (the client's buckets
	 * ride along), and then one per instance that found it empty: no call per refusal. */
	ck_assert_int_le(ts.calls, 50 / 6 + 1 + 3 + 3);
	int after = ts.calls;
	ck_assert_int_eq(rl_admitted(rl[0], "marie", "app", false, 100), 0);
	ck_assert_int_eq(ts.calls, after); /* emptied: not asked again within the second */
	long wait = 0;
	ck_assert_int_eq(ratelimit_take(rl[1], "marie", "app", false, &wait), RATELIMIT_LIMITED);
	ck_assert_int_ge(wait, 59); /* a token is back in a minute */
	/* Writes and another subject have buckets of their own. */
	ck_assert_int_eq(rl_admitted(rl[2], "paul", "app", false, 10), 10);
	ck_assert(!ratelimit_on_fallback(rl[0]));
	for (int i = 0; i < 3; i++)
		ratelimit_free(rl[i]);
}
END_TEST

/* A client application's budget holds across instances and subjects too. */
START_TEST(a_client_budget_is_shared_across_instances)
{
	struct test_store ts = {0};
	struct ratelimit_store store = {test_store_take, &ts};
	struct ratelimit_settings set = {.read_per_minute = 1,
					 .read_burst = 8,
					 .write_per_minute = 1,
					 .write_burst = 8,
					 .client_factor = 2,
					 .store = &store};
	struct ratelimit *a = ratelimit_new(&set), *b = ratelimit_new(&set);
	int n = 0;
	for (int i = 0; i < 40; i++) {
		char who[32];
		snprintf(who, sizeof who, "user-%d", i);
		n += rl_admitted(i % 2 ? a : b, who, "one-app", true, 1);
	}
	ck_assert_int_eq(n, 16);
	ratelimit_free(a);
	ratelimit_free(b);
}
END_TEST

/* The store as the database is: shared by the threads of an instance, each take one round trip
 * (a fraction of a millisecond) during which other calls arrive. */
struct shared_store {
	struct test_store ts;
	pthread_mutex_t lock;
};

static int shared_store_take(void *ctx, struct fleet_budget_lease *l, size_t n)
{
	struct shared_store *ss = ctx;
	nanosleep(&(struct timespec){.tv_nsec = 300 * 1000}, NULL);
	pthread_mutex_lock(&ss->lock);
	int rc = test_store_take(&ss->ts, l, n);
	pthread_mutex_unlock(&ss->lock);
	return rc;
}

/* One subject's calls through one client application, started with the others. */
struct burst {
	struct ratelimit *rl;
	pthread_barrier_t *go;
	const char *client;
	char subject[24]; /* "user-" and any int */
	int calls, answered;
};

static void *burst_run(void *p)
{
	struct burst *b = p;
	pthread_barrier_wait(b->go);
	for (int i = 0; i < b->calls; i++) {
		long wait = 0;
		if (ratelimit_take(b->rl, b->subject, b->client, false, &wait) == RATELIMIT_OK)
			b->answered++;
	}
	return NULL;
}

/* Eight subjects, calls calls each through client, all at once; what each was answered. */
static void burst_all(struct ratelimit *rl, const char *client, int calls, struct burst b[8])
{
	pthread_t th[8];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, 8);
	for (int i = 0; i < 8; i++) {
		b[i] = (struct burst){.rl = rl, .go = &go, .client = client, .calls = calls};
		snprintf(b[i].subject, sizeof b[i].subject, "user-%d", i);
		ck_assert_int_eq(pthread_create(&th[i], NULL, burst_run, &b[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
}

/* 60 reads a minute, bursts of 10, a client application's budget 3 times that: eight subjects
 * sending 8 calls each through one application get its 30, then one call each through another
 * application is answered for all eight (none has spent its 10), however the calls waiting for
 * the same leases interleave. Repeated: the interleavings differ from run to run (100 runs take
 * 0.7 s; under valgrind, which serialises the threads, 10). */
START_TEST(calls_waiting_for_a_lease_are_refused_only_by_an_empty_bucket)
{
	int runs = getenv("BIKAROO_VALGRIND") ? 10 : 100;
	for (int run = 0; run < runs; run++) {
		struct shared_store ss = {.lock = PTHREAD_MUTEX_INITIALIZER};
		struct ratelimit_store store = {shared_store_take, &ss};
		struct ratelimit_settings set = {.read_per_minute = 60,
						 .read_burst = 10,
						 .write_per_minute = 60,
						 .write_burst = 10,
						 .client_factor = 3,
						 .store = &store};
		struct ratelimit *rl = ratelimit_new(&set);
		struct burst b[8];
		burst_all(rl, "app-a", 8, b);
		int answered = 0;
		for (int i = 0; i < 8; i++)
			answered += b[i].answered;
		ck_assert_msg(answered == 30,
			      "run %d: %d of 64 calls through app-a answered, not 30", run,
			      answered);
		burst_all(rl, "app-b", 1, b);
		for (int i = 0; i < 8; i++)
			ck_assert_msg(b[i].answered == 1,
				      "run %d: %s refused through app-b with tokens left", run,
				      b[i].subject);
		ratelimit_free(rl);
		pthread_mutex_destroy(&ss.lock);
	}
}
END_TEST

/* The store failing: each instance falls back to its own buckets (whole budgets each) and says
 * so; it does not ask the store again before RATELIMIT_STORE_RETRY_S. */
START_TEST(a_failing_store_falls_back_to_local_budgets)
{
	struct test_store ts = {.fail = true};
	struct ratelimit_store store = {test_store_take, &ts};
	struct ratelimit_settings set = {.read_per_minute = 1,
					 .read_burst = 5,
					 .write_per_minute = 1,
					 .write_burst = 5,
					 .client_factor = 10,
					 .store = &store};
	long before = metrics_value(&metrics_rate_fallback, NULL);
	struct ratelimit *a = ratelimit_new(&set), *b = ratelimit_new(&set);
	ck_assert_int_eq(rl_admitted(a, "marie", "app", false, 10), 5);
	ck_assert_int_eq(rl_admitted(b, "marie", "app", false, 10), 5);
	ck_assert_int_eq(ts.calls, 2); /* one failure each, then their own buckets */
	ck_assert(ratelimit_on_fallback(a) && ratelimit_on_fallback(b));
	ck_assert_int_eq(metrics_value(&metrics_rate_fallback, NULL), before + 2);
	ratelimit_free(a);
	ratelimit_free(b);
	ck_assert_int_eq(metrics_value(&metrics_rate_fallback, NULL), before);
}
END_TEST

CHECK_SUITE(ratelimit)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("buckets");
	tcase_add_test(tc, reads_and_writes_have_their_own_budget);
	tcase_add_test(tc, a_client_application_is_limited_across_its_subjects);
	tcase_add_test(tc, no_limit_when_switched_off);
	tcase_add_test(tc, instances_with_a_store_share_one_budget);
	tcase_add_test(tc, a_client_budget_is_shared_across_instances);
	tcase_add_test(tc, a_failing_store_falls_back_to_local_budgets);
	tcase_add_test(tc, calls_waiting_for_a_lease_are_refused_only_by_an_empty_bucket);
	suite_add_tcase(s, tc);
	return s;
}
