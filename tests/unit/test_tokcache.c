/* The token validation cache (server/auth/tokcache.c): hits, expiry by the token's exp and by the
 * cache's max age, the key-set generation rule, refusals, and the bound on its size. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "server/auth/tokcache.h"
#include "tests/check_main.h"

#define T0 1700000000L

static struct fleet_actor tc_actor(const char *sub)
{
	struct fleet_actor a;
	memset(&a, 0, sizeof a);
	snprintf(a.subject, sizeof a.subject, "%s", sub);
	snprintf(a.client_id, sizeof a.client_id, "%s", "customer-care-assistant");
	a.scopes = 3;
	return a;
}

static void tc_digest(unsigned n, unsigned char d[TOKCACHE_DIGEST])
{
	char tok[32];
	int len = snprintf(tok, sizeof tok, "token-%u", n);
	tokcache_digest(tok, (size_t)len, d);
}

START_TEST(a_verified_token_is_served_with_its_principal)
{
	struct tokcache *tc = tokcache_new(30);
	unsigned char d[TOKCACHE_DIGEST], other[TOKCACHE_DIGEST];
	tc_digest(1, d);
	tc_digest(2, other);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active = false;
	ck_assert(!tokcache_get(tc, d, 1, T0, &got, &active));
	tokcache_put(tc, d, 1, T0, T0 + 600, true, &a);
	memset(&got, 0, sizeof got);
	ck_assert(tokcache_get(tc, d, 1, T0 + 1, &got, &active));
	ck_assert(active);
	ck_assert_str_eq(got.subject, "marie");
	ck_assert_str_eq(got.client_id, "customer-care-assistant");
	ck_assert_uint_eq(got.scopes, 3);
	ck_assert(!tokcache_get(tc, other, 1, T0 + 1, &got, &active));
	/* The digest is of the exact bytes: one byte more is another token. */
	unsigned char longer[TOKCACHE_DIGEST];
	tokcache_digest("token-1=", 8, longer);
	ck_assert(!tokcache_get(tc, longer, 1, T0 + 1, &got, &active));
	tokcache_free(tc);
}
END_TEST

START_TEST(an_entry_stops_at_the_tokens_exp)
{
	struct tokcache *tc = tokcache_new(30);
	unsigned char d[TOKCACHE_DIGEST];
	tc_digest(1, d);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active;
	tokcache_put(tc, d, 1, T0, T0 + 5, true, &a);
	ck_assert(tokcache_get(tc, d, 1, T0 + 4, &got, &active));
	ck_assert(!tokcache_get(tc, d, 1, T0 + 5, &got, &active)); /* now == exp: gone */
	ck_assert(!tokcache_get(tc, d, 1, T0 + 6, &got, &active));
	/* Already expired: not stored at all. */
	tc_digest(2, d);
	tokcache_put(tc, d, 1, T0, T0, true, &a);
	ck_assert(!tokcache_get(tc, d, 1, T0 - 1, &got, &active));
	ck_assert_uint_eq(tokcache_count(tc, 1, T0), 1); /* token 1 only */
	tokcache_free(tc);
}
END_TEST

START_TEST(an_entry_stops_after_the_max_age)
{
	struct tokcache *tc = tokcache_new(30);
	unsigned char d[TOKCACHE_DIGEST];
	tc_digest(1, d);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active;
	tokcache_put(tc, d, 1, T0, T0 + 3600, true, &a);
	ck_assert(tokcache_get(tc, d, 1, T0 + 29, &got, &active));
	ck_assert(!tokcache_get(tc, d, 1, T0 + 30, &got, &active));
	/* A clock that went back does not stretch an entry either. */
	ck_assert(!tokcache_get(tc, d, 1, T0 - 1, &got, &active));
	/* Verified again: served again, from the new time. */
	tokcache_put(tc, d, 1, T0 + 30, T0 + 3600, true, &a);
	ck_assert(tokcache_get(tc, d, 1, T0 + 59, &got, &active));
	ck_assert_uint_eq(tokcache_count(tc, 1, T0 + 59), 1); /* replaced, not duplicated */
	tokcache_free(tc);
	/* Max age 0: the cache never answers. */
	tc = tokcache_new(0);
	tokcache_put(tc, d, 1, T0, T0 + 3600, true, &a);
	ck_assert(!tokcache_get(tc, d, 1, T0, &got, &active));
	tokcache_free(tc);
}
END_TEST

START_TEST(a_new_key_set_generation_invalidates_entries)
{
	struct tokcache *tc = tokcache_new(30);
	unsigned char d[TOKCACHE_DIGEST];
	tc_digest(1, d);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active;
	tokcache_put(tc, d, 1, T0, T0 + 600, true, &a);
	ck_assert(tokcache_get(tc, d, 1, T0, &got, &active));
	ck_assert(!tokcache_get(tc, d, 2, T0, &got, &active)); /* key set refreshed */
	/* A verification that raced a refresh stores the older generation: never served. */
	tokcache_put(tc, d, 1, T0 + 1, T0 + 600, true, &a);
	ck_assert(!tokcache_get(tc, d, 2, T0 + 1, &got, &active));
	tokcache_put(tc, d, 2, T0 + 1, T0 + 600, true, &a);
	ck_assert(tokcache_get(tc, d, 2, T0 + 1, &got, &active));
	tokcache_free(tc);
}
END_TEST

START_TEST(a_refusal_is_served_as_a_refusal)
{
	/* Introspection caches "not active" answers; they come back as such, with no principal. */
	struct tokcache *tc = tokcache_new(30);
	unsigned char d[TOKCACHE_DIGEST];
	tc_digest(1, d);
	struct fleet_actor got = tc_actor("stale");
	bool active = true;
	tokcache_put(tc, d, 0, T0, T0 + 30, false, NULL);
	ck_assert(tokcache_get(tc, d, 0, T0, &got, &active));
	ck_assert(!active);
	ck_assert_str_eq(got.subject, "");
	tokcache_free(tc);
}
END_TEST

/* The bucket tokcache.c picks for a digest (its first bytes, modulo the bucket count). */
static size_t tc_bucket(const unsigned char d[TOKCACHE_DIGEST])
{
	return ((size_t)d[0] | (size_t)d[1] << 8 | (size_t)d[2] << 16) % TOKCACHE_BUCKETS;
}

/* Token numbers whose digests share one bucket: want of them into out. */
static void tc_same_bucket(unsigned *out, unsigned want)
{
	unsigned char d0[TOKCACHE_DIGEST], d[TOKCACHE_DIGEST];
	tc_digest(0, d0);
	out[0] = 0;
	unsigned got = 1;
	for (unsigned i = 1; got < want; i++) {
		tc_digest(i, d);
		if (tc_bucket(d) == tc_bucket(d0))
			out[got++] = i;
	}
}

START_TEST(a_full_bucket_evicts_an_unusable_entry_then_its_oldest)
{
	struct tokcache *tc = tokcache_new(600);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active;
	unsigned n[TOKCACHE_WAYS + 2];
	unsigned char d[TOKCACHE_WAYS + 2][TOKCACHE_DIGEST];
	tc_same_bucket(n, TOKCACHE_WAYS + 2);
	for (unsigned i = 0; i < TOKCACHE_WAYS + 2; i++)
		tc_digest(n[i], d[i]);
	/* Fill the bucket; the entry stored second expires early. */
	for (unsigned i = 0; i < TOKCACHE_WAYS; i++)
		tokcache_put(tc, d[i], 1, T0 + i, i == 1 ? T0 + 10 : T0 + 3600, true, &a);
	/* The expired entry makes room, the oldest live one stays. */
	tokcache_put(tc, d[TOKCACHE_WAYS], 1, T0 + 20, T0 + 3600, true, &a);
	ck_assert(tokcache_get(tc, d[0], 1, T0 + 20, &got, &active));
	ck_assert(tokcache_get(tc, d[TOKCACHE_WAYS], 1, T0 + 20, &got, &active));
	/* Full of live entries: the oldest goes. */
	tokcache_put(tc, d[TOKCACHE_WAYS + 1], 1, T0 + 21, T0 + 3600, true, &a);
	ck_assert(!tokcache_get(tc, d[0], 1, T0 + 21, &got, &active));
	for (unsigned i = 2; i < TOKCACHE_WAYS + 2; i++)
		ck_assert_msg(tokcache_get(tc, d[i], 1, T0 + 21, &got, &active), "entry %u lost",
			      i);
	ck_assert_uint_eq(tokcache_count(tc, 1, T0 + 21), TOKCACHE_WAYS);
	tokcache_free(tc);
}
END_TEST

START_TEST(the_cache_is_bounded_and_keeps_recent_entries)
{
	struct tokcache *tc = tokcache_new(600);
	struct fleet_actor a = tc_actor("marie"), got;
	bool active;
	unsigned char d[TOKCACHE_DIGEST];
	const unsigned n = 3 * TOKCACHE_SLOTS;
	for (unsigned i = 0; i < n; i++) {
		tc_digest(i, d);
		tokcache_put(tc, d, 1, T0 + (long)i / 64, T0 + 3600, true, &a);
	}
	long now = T0 + (long)n / 64;
	size_t live = tokcache_count(tc, 1, now);
	ck_assert_uint_le(live, TOKCACHE_SLOTS);
	ck_assert_uint_ge(live, TOKCACHE_SLOTS / 2); /* the table is used, not thrashed */
	/* The newest entries survive eviction (a full bucket drops its oldest). */
	for (unsigned i = n - 16; i < n; i++) {
		tc_digest(i, d);
		ck_assert_msg(tokcache_get(tc, d, 1, now, &got, &active), "entry %u evicted", i);
	}
	tokcache_free(tc);
}
END_TEST

CHECK_SUITE(tokcache)
{
	Suite *s = suite_create("tokcache");
	TCase *tc = tcase_create("cache");
	tcase_add_test(tc, a_verified_token_is_served_with_its_principal);
	tcase_add_test(tc, an_entry_stops_at_the_tokens_exp);
	tcase_add_test(tc, an_entry_stops_after_the_max_age);
	tcase_add_test(tc, a_new_key_set_generation_invalidates_entries);
	tcase_add_test(tc, a_refusal_is_served_as_a_refusal);
	tcase_add_test(tc, a_full_bucket_evicts_an_unusable_entry_then_its_oldest);
	tcase_add_test(tc, the_cache_is_bounded_and_keeps_recent_entries);
	suite_add_tcase(s, tc);
	return s;
}
