/* requestState: sealed here or refused — tampering, other callers, other requests, expiry. */
#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/keyring.h"
#include "common/mem.h"
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
	/* Another key (another deployment, or a key rotated out) does not verify. */
	ck_assert_int_eq(reqstate_init("a different secret, also long enough......"), 0);
	ck_assert_int_eq(reqstate_open(s, &marie, "tools/call", d, &out, NULL),
			 REQSTATE_RETIRED_KEY);
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

#define K1 "the first state secret, long enough for the hmac key"
#define K2 "the second state secret, long enough for the hmac key"
#define K3 "a third state secret that another deployment could use"

static void empty_digest(char d[65])
{
	json_t *p = json_object();
	reqstate_digest(p, d);
	json_decref(p);
}

static char *seal_with(const char *current, const char *previous, const char *d)
{
	ck_assert_int_eq(keyring_init(current, previous), KEYRING_OK);
	json_t *p = json_object();
	char *s = reqstate_seal(&marie, "tools/call", d, p, 60, NULL);
	json_decref(p);
	return s;
}

static enum reqstate_status open_with(const char *current, const char *previous, const char *s,
				      const char *d)
{
	ck_assert_int_eq(keyring_init(current, previous), KEYRING_OK);
	json_t *out = NULL;
	enum reqstate_status st = reqstate_open(s, &marie, "tools/call", d, &out, NULL);
	json_decref(out);
	return st;
}

/* The three steps of a rotation: the next key announced (accepted), then current (the old one
 * accepted), then the old one removed: a state sealed at any step opens on an instance one step
 * ahead or behind, and one sealed with a removed key is refused as such. */
START_TEST(rotation_keeps_states_in_flight)
{
	char d[65];
	empty_digest(d);
	char *old = seal_with(K1, NULL, d);
	ck_assert_int_eq(open_with(K1, K2, old, d), REQSTATE_OK); /* step 1: K2 announced */
	ck_assert_int_eq(open_with(K2, K1, old, d), REQSTATE_OK); /* step 2: K2 current */
	ck_assert_int_eq(open_with(K2, NULL, old, d), REQSTATE_RETIRED_KEY); /* step 3 */
	ck_assert_int_eq(open_with(K3, NULL, old, d), REQSTATE_RETIRED_KEY);
	char *mid = seal_with(K2, K1, d);
	ck_assert_int_eq(open_with(K1, K2, mid, d), REQSTATE_OK); /* an instance one step behind */
	ck_assert_int_eq(open_with(K2, NULL, mid, d), REQSTATE_OK);
	ck_assert_int_eq(open_with(K1, NULL, mid, d), REQSTATE_RETIRED_KEY);
	free(old);
	free(mid);
}
END_TEST

/* body (borrowed) as a state MACed with the key of secret, as reqstate.c seals (new memory). */
static char *seal_body_with(const json_t *body, const char *secret)
{
	char *text = json_dumps(body, JSON_COMPACT);
	char *b = b64_encode((const unsigned char *)text, strlen(text), true);
	unsigned char key[32], mac[32];
	unsigned int mlen = 32;
	SHA256((const unsigned char *)secret, strlen(secret), key);
	char *msg = mem_printf("mcp-requestState-v1.%s", b);
	HMAC(EVP_sha256(), key, sizeof key, (const unsigned char *)msg, strlen(msg), mac, &mlen);
	char *m = b64_encode(mac, sizeof mac, true);
	char *state = mem_printf("%s.%s", b, m);
	free(text);
	free(b);
	free(msg);
	free(m);
	return state;
}

/* A state sealed with one key that names another accepted key is refused: the id is bound. */
START_TEST(the_key_id_is_bound_to_the_key)
{
	char d[65];
	empty_digest(d);
	char *s = seal_with(K1, NULL, d);
	ck_assert_int_eq(keyring_init(K2, NULL), KEYRING_OK);
	struct keyring ring;
	keyring_get(&ring);
	char k2id[KEYRING_ID_HEX + 1];
	memcpy(k2id, ring.keys[0].id, sizeof k2id);
	size_t tlen = 0;
	unsigned char *text = b64_decode(s, (size_t)(strchr(s, '.') - s), true, &tlen);
	json_error_t e;
	json_t *body = json_loadb((const char *)text, tlen, 0, &e);
	/* "k" rewritten to K2's id, MACed with K1 again. */
	json_object_set_new(body, "k", json_string(k2id));
	char *forged = seal_body_with(body, K1);
	ck_assert_int_eq(open_with(K1, K2, forged, d), REQSTATE_MALFORMED);
	free(forged);
	/* Without "k", as a release before key rings sealed it: it opens with the key that
	 * verifies it, and only with it. */
	json_object_del(body, "k");
	char *old = seal_body_with(body, K1);
	ck_assert_int_eq(open_with(K2, K1, old, d), REQSTATE_OK);
	ck_assert_int_eq(open_with(K2, NULL, old, d), REQSTATE_MALFORMED);
	free(old);
	free(text);
	json_decref(body);
	free(s);
}
END_TEST

START_TEST(key_ring_settings)
{
	struct keyring r;
	ck_assert_int_eq(keyring_init(K1, "\n" K2 "\r\n\n" K3 "\n"), KEYRING_OK);
	keyring_get(&r);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_ptr_eq(keyring_find(&r, r.keys[1].id), &r.keys[1]);
	ck_assert_str_ne(r.keys[0].id, r.keys[1].id);
	/* The current secret repeated among the previous ones is one key. */
	ck_assert_int_eq(keyring_init(K1, K1 "\n" K2), KEYRING_OK);
	keyring_get(&r);
	ck_assert_uint_eq(r.n, 2);
	/* A refused ring changes nothing (a reload with a bad secret keeps the keys in use). */
	ck_assert_int_eq(keyring_init(K3, "too short"), KEYRING_SHORT_SECRET);
	struct keyring same;
	keyring_get(&same);
	ck_assert_uint_eq(same.n, 2);
	ck_assert_str_eq(same.keys[0].id, r.keys[0].id);
	ck_assert_int_eq(keyring_init("", K2), KEYRING_NO_CURRENT);
	ck_assert_int_eq(keyring_init(K1, K2 "1\n" K2 "2\n" K2 "3\n" K2 "4\n" K2 "5"),
			 KEYRING_TOO_MANY);
	ck_assert_int_eq(keyring_init("", NULL), KEYRING_OK);
	keyring_get(&r);
	ck_assert_uint_eq(r.n, 1);
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
	tcase_add_test(tc, rotation_keeps_states_in_flight);
	tcase_add_test(tc, the_key_id_is_bound_to_the_key);
	tcase_add_test(tc, key_ring_settings);
	suite_add_tcase(s, tc);
	return s;
}
