/* JWT access-token checks (server/auth/jwt.c) with keys and signatures made by cjose itself, the
 * bearer-header parser (server/auth/auth.c) and the outbound URL policy (server/auth/fetch.c). */
#include <check.h>
#include <cjose/cjose.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/b64.h"
#include "common/mem.h"
#include "server/auth/auth.h"
#include "server/auth/fetch.h"
#include "server/auth/jwt.h"
#include "tests/check_main.h"

#define ISS "https://issuer.bikaroo.test"
#define AUD "https://mcp.bikaroo.test/mcp"

static cjose_jwk_t *key, *other_key;
static struct jwt_keyset *ks;
static const struct jwt_policy policy = {ISS, AUD, NULL, JWT_ALG_RS256 | JWT_ALG_ES256, 60, 0};

static cjose_jwk_t *jwt_new_rsa(const char *kid)
{
	cjose_err err;
	static const uint8_t e[] = {1, 0, 1};
	cjose_jwk_t *k = cjose_jwk_create_RSA_random(2048, e, sizeof e, &err);
	ck_assert_ptr_nonnull(k);
	ck_assert(cjose_jwk_set_kid(k, kid, strlen(kid), &err));
	return k;
}

static void jwt_setup(void)
{
	key = jwt_new_rsa("k1");
	other_key = jwt_new_rsa("k1"); /* same kid, another key */
	cjose_err err;
	char *pub = cjose_jwk_to_json(key, false, &err);
	cjose_jwk_t *oct = cjose_jwk_create_oct_random(32, &err);
	char *octj = cjose_jwk_to_json(oct, true, &err);
	char *doc = mem_printf("{\"keys\":[%s,%s]}", octj, pub);
	ck_assert_int_eq(jwt_keyset_parse(doc, strlen(doc), &ks), JWT_OK);
	ck_assert_uint_eq(jwt_keyset_size(ks),
			  1); /* the symmetric key is never a verification key */
	free(doc);
	free(pub);
	free(octj);
	cjose_jwk_release(oct);
}

static void jwt_teardown(void)
{
	jwt_keyset_free(ks);
	cjose_jwk_release(key);
	cjose_jwk_release(other_key);
}

/* Signs claims (JSON text) with k under header alg/typ/kid; new string. */
static char *jwt_sign(cjose_jwk_t *k, const char *typ, const char *claims)
{
	cjose_err err;
	cjose_header_t *h = cjose_header_new(&err);
	cjose_header_set(h, CJOSE_HDR_ALG, CJOSE_HDR_ALG_RS256, &err);
	cjose_header_set(h, CJOSE_HDR_KID, "k1", &err);
	if (typ)
		cjose_header_set(h, "typ", typ, &err);
	cjose_jws_t *jws = cjose_jws_sign(k, h, (const uint8_t *)claims, strlen(claims), &err);
	ck_assert_ptr_nonnull(jws);
	const char *ser = NULL;
	ck_assert(cjose_jws_export(jws, &ser, &err));
	char *out = mem_strdup(ser);
	cjose_jws_release(jws);
	cjose_header_release(h);
	return out;
}

static char *jwt_claims(long exp_offset, const char *aud, const char *iss)
{
	long now = (long)time(NULL);
	return mem_printf(
		"{\"iss\":\"%s\",\"aud\":%s,\"sub\":\"marie\",\"client_id\":\"customer-care-"
		"assistant\",\"scope\":\"fleet:read\",\"iat\":%ld,\"exp\":%ld}",
		iss, aud, now - 10, now + exp_offset);
}

static enum jwt_status jwt_check(const char *token, const char **why)
{
	json_t *claims = NULL;
	enum jwt_status st =
		jwt_verify(ks, &policy, token, strlen(token), (long)time(NULL), &claims, why);
	json_decref(claims);
	return st;
}

START_TEST(accepts_a_good_token)
{
	char *c = jwt_claims(600, "\"" AUD "\"", ISS);
	char *t = jwt_sign(key, "at+jwt", c);
	json_t *claims = NULL;
	const char *why = NULL;
	ck_assert_int_eq(jwt_verify(ks, &policy, t, strlen(t), (long)time(NULL), &claims, &why),
			 JWT_OK);
	ck_assert_str_eq(json_string_value(json_object_get(claims, "sub")), "marie");
	json_decref(claims);
	free(t);
	t = jwt_sign(key, "application/AT+JWT", c);
	ck_assert_int_eq(jwt_check(t, &why), JWT_OK);
	free(t);
	free(c);
	c = jwt_claims(600, "[\"https://other.example\",\"" AUD "\"]", ISS);
	t = jwt_sign(key, "at+jwt", c);
	ck_assert_int_eq(jwt_check(t, &why), JWT_OK);
	free(t);
	free(c);
}
END_TEST

START_TEST(refuses_bad_claims)
{
	const char *why = NULL;
	struct {
		long exp;
		const char *aud, *iss, *typ, *reason;
	} bad[] = {
		{-120, "\"" AUD "\"", ISS, "at+jwt", "token expired"},
		{600, "\"https://other.example\"", ISS, "at+jwt",
		 "token audience is not this server"},
		{600, "\"" AUD "/x\"", ISS, "at+jwt", "token audience is not this server"},
		{600, "null", ISS, "at+jwt", "token audience is not this server"},
		{600, "\"" AUD "\"", "https://evil.example", "at+jwt",
		 "token issuer is not trusted"},
		{600, "\"" AUD "\"", ISS, "JWT", "not an access token (typ must be at+jwt)"},
		{600, "\"" AUD "\"", ISS, NULL, "not an access token (typ must be at+jwt)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *c = jwt_claims(bad[i].exp, bad[i].aud, bad[i].iss);
		char *t = jwt_sign(key, bad[i].typ, c);
		ck_assert_int_eq(jwt_check(t, &why), JWT_INVALID);
		ck_assert_str_eq(why, bad[i].reason);
		free(t);
		free(c);
	}
	/* Within the clock skew, an expiry just passed is still accepted. */
	char *c = jwt_claims(-30, "\"" AUD "\"", ISS);
	char *t = jwt_sign(key, "at+jwt", c);
	ck_assert_int_eq(jwt_check(t, &why), JWT_OK);
	free(t);
	free(c);
}
END_TEST

/* NumericDate claims out of any sane range (found by make fuzz: a huge real iat was converted
 * to long, which is undefined): refused, never wrapped into a valid-looking time. */
START_TEST(refuses_times_out_of_range)
{
	long now = (long)time(NULL);
	/* NULL: a good value (iat now - 10 s, exp now + 600 s), or no nbf at all. */
	struct {
		const char *iat, *nbf, *exp, *reason;
	} bad[] = {
		{"1.3e102", NULL, NULL, "token issue time is missing or in the future"},
		{NULL, NULL, "1e300", "token has no expiry"},
		{NULL, NULL, "9223372036854775807", "token has no expiry"},
		{NULL, NULL, "-9223372036854775807", "token has no expiry"},
		{NULL, "-1e300", NULL, "token not valid yet"},
		{"-5", NULL, NULL, "token issue time is missing or in the future"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char iat[32], exp[32];
		snprintf(iat, sizeof iat, "%ld", now - 10);
		snprintf(exp, sizeof exp, "%ld", now + 600);
		char *c = mem_printf("{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"sub\":\"marie\","
				     "\"client_id\":\"customer-care-assistant\",\"iat\":%s%s%s,"
				     "\"exp\":%s}",
				     bad[i].iat ? bad[i].iat : iat, bad[i].nbf ? ",\"nbf\":" : "",
				     bad[i].nbf ? bad[i].nbf : "", bad[i].exp ? bad[i].exp : exp);
		char *t = jwt_sign(key, "at+jwt", c);
		const char *why = NULL;
		ck_assert_msg(jwt_check(t, &why) != JWT_OK, "accepted: %s", c);
		ck_assert_msg(why && strcmp(why, bad[i].reason) == 0, "%s: %s", c, why);
		free(t);
		free(c);
	}
	/* What the token cache and the streams take as the end of authority: a fractional exp is
	 * its whole second (it used to be read as 0, "never"), an unusable one is none. */
	json_t *j = json_pack("{s:f, s:I, s:f, s:s}", "a", 1800000000.7, "b",
			      (json_int_t)9223372036854775807LL, "c", -1.0, "d", "1800000000");
	long t = 0;
	ck_assert(jwt_time(j, "a", &t));
	ck_assert_int_eq(t, 1800000000L);
	ck_assert(!jwt_time(j, "b", &t) && !jwt_time(j, "c", &t) && !jwt_time(j, "d", &t));
	ck_assert(!jwt_time(j, "missing", &t));
	json_decref(j);
}
END_TEST

START_TEST(refuses_bad_signatures_and_algorithms)
{
	const char *why = NULL;
	char *c = jwt_claims(600, "\"" AUD "\"", ISS);
	/* Same kid, another key. */
	char *t = jwt_sign(other_key, "at+jwt", c);
	ck_assert_int_eq(jwt_check(t, &why), JWT_INVALID);
	ck_assert_str_eq(why, "token signature is not valid");
	/* The same header and signature over other claims. */
	char *dot1 = strchr(t, '.'), *dot2 = strrchr(t, '.');
	char *forged_claims = b64_encode((const unsigned char *)"{\"sub\":\"olivia\"}", 16, true);
	char *tampered = mem_printf("%.*s.%s%s", (int)(dot1 - t), t, forged_claims, dot2);
	ck_assert_int_eq(jwt_check(tampered, &why), JWT_INVALID);
	/* alg none, and HS256 (whatever the key), are refused before any key is used. */
	char *none_h = b64_encode((const unsigned char *)"{\"alg\":\"none\",\"typ\":\"at+jwt\"}",
				  29, true);
	char *none = mem_printf("%s.%s.", none_h, forged_claims);
	ck_assert_int_eq(jwt_check(none, &why), JWT_INVALID);
	const char *hs = "{\"alg\":\"HS256\",\"typ\":\"at+jwt\",\"kid\":\"k1\"}";
	char *hs_h = b64_encode((const unsigned char *)hs, strlen(hs), true);
	char *hs_t = mem_printf("%s.%s.c2lnbmF0dXJl", hs_h, forged_claims);
	ck_assert_int_eq(jwt_check(hs_t, &why), JWT_INVALID);
	ck_assert_str_eq(why, "signing algorithm not allowed");
	/* An allow-list without RS256 refuses an otherwise perfect RS256 token. */
	struct jwt_policy es_only = policy;
	es_only.algs = JWT_ALG_ES256;
	char *good = jwt_sign(key, "at+jwt", c);
	json_t *claims = NULL;
	ck_assert_int_eq(
		jwt_verify(ks, &es_only, good, strlen(good), (long)time(NULL), &claims, &why),
		JWT_INVALID);
	ck_assert_ptr_null(claims);
	free(good);
	free(hs_t);
	free(hs_h);
	free(none);
	free(none_h);
	free(tampered);
	free(forged_claims);
	free(t);
	free(c);
}
END_TEST

START_TEST(unknown_kid_is_reported_for_a_refresh)
{
	cjose_jwk_t *k2 = jwt_new_rsa("k2");
	char *c = jwt_claims(600, "\"" AUD "\"", ISS);
	cjose_err err;
	cjose_header_t *h = cjose_header_new(&err);
	cjose_header_set(h, CJOSE_HDR_ALG, CJOSE_HDR_ALG_RS256, &err);
	cjose_header_set(h, CJOSE_HDR_KID, "k2", &err);
	cjose_header_set(h, "typ", "at+jwt", &err);
	cjose_jws_t *jws = cjose_jws_sign(k2, h, (const uint8_t *)c, strlen(c), &err);
	const char *ser = NULL;
	ck_assert(cjose_jws_export(jws, &ser, &err));
	const char *why = NULL;
	ck_assert_int_eq(jwt_check(ser, &why), JWT_UNKNOWN_KEY);
	cjose_jws_release(jws);
	cjose_header_release(h);
	cjose_jwk_release(k2);
	free(c);
}
END_TEST

START_TEST(algorithm_lists)
{
	ck_assert_uint_eq(jwt_parse_algs("RS256 ES256"), JWT_ALG_RS256 | JWT_ALG_ES256);
	ck_assert_uint_eq(jwt_parse_algs("ES256,RS256"), JWT_ALG_RS256 | JWT_ALG_ES256);
	ck_assert_uint_eq(jwt_parse_algs("RS256"), JWT_ALG_RS256);
	ck_assert_uint_eq(jwt_parse_algs("RS256 HS256"), 0);
	ck_assert_uint_eq(jwt_parse_algs("none"), 0);
	ck_assert_uint_eq(jwt_parse_algs(""), 0);
}
END_TEST

START_TEST(bearer_header)
{
	const char *tok;
	size_t len;
	const char *one[] = {"Bearer abc.DEF-_~+/="};
	ck_assert_int_eq(auth_bearer(one, 1, &tok, &len), AUTH_OK);
	ck_assert_uint_eq(len, strlen("abc.DEF-_~+/="));
	const char *lower[] = {"bearer   xyz  "};
	ck_assert_int_eq(auth_bearer(lower, 1, &tok, &len), AUTH_OK);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(auth_bearer(NULL, 0, &tok, &len), AUTH_NO_TOKEN);
	const char *two[] = {"Bearer a", "Bearer a"};
	ck_assert_int_eq(auth_bearer(two, 2, &tok, &len), AUTH_BAD_REQUEST);
	/* Another scheme is no Bearer credentials at all (401), not a malformed Bearer (400). */
	const char *other[] = {"Basic abc", "Bearerabc", "Digest x=1", "Negotiate"};
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		ck_assert_msg(auth_bearer(&other[i], 1, &tok, &len) == AUTH_NO_TOKEN, "%s",
			      other[i]);
	const char *bad[] = {"Bearer",      "Bearer ",    "Bearer a b",  "Bearer a,b",
			     "Bearer =abc", "Bearer a=b", "Bearer \"a\""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(auth_bearer(&bad[i], 1, &tok, &len) == AUTH_BAD_REQUEST, "%s",
			      bad[i]);
}
END_TEST

START_TEST(outbound_url_policy)
{
	struct fetch_policy strict = {false, 1000}, test = {true, 1000};
	ck_assert(fetch_url_allowed(&strict, "https://issuer.example/jwks"));
	ck_assert(!fetch_url_allowed(&strict, "http://127.0.0.1:9/jwks"));
	ck_assert(fetch_url_allowed(&test, "http://127.0.0.1:9/jwks"));
	ck_assert(fetch_url_allowed(&test, "http://localhost/jwks"));
	ck_assert(!fetch_url_allowed(&test, "http://169.254.169.254/latest"));
	ck_assert(!fetch_url_allowed(&test, "http://127.0.0.1.evil.example/"));
	ck_assert(!fetch_url_allowed(&test, "file:///etc/passwd"));
	ck_assert(!fetch_url_allowed(&test, "gopher://127.0.0.1/"));
	ck_assert(!fetch_url_allowed(&strict, "https:///nohost"));
	ck_assert(!fetch_url_allowed(&strict, "https://issuer.example/#frag"));
	/* Judged on libcurl's parse, not a prefix: here localhost:1 is userinfo, the host is
	 * 127.0.0.2. Userinfo is refused anywhere (it would be sent as credentials). */
	ck_assert(!fetch_url_allowed(&test, "http://localhost:1@127.0.0.2:8080/jwks"));
	ck_assert(!fetch_url_allowed(&test, "http://127.0.0.1@evil.example/jwks"));
	ck_assert(!fetch_url_allowed(&strict, "https://user:pw@issuer.example/jwks"));
	ck_assert(!fetch_url_allowed(&test, "http://localhost.evil.example/"));
	ck_assert(fetch_url_allowed(&test, "http://[::1]:9/jwks"));
	ck_assert(fetch_url_allowed(&test, "HTTP://LOCALHOST:9/jwks"));
	/* url.full in a fetch's span: the query's values never, its names kept. */
	static const char *const redacted[][2] = {
		{"https://issuer.example/jwks", "https://issuer.example/jwks"},
		{"https://issuer.example/jwks?sig=s3cr3t&v=2",
		 "https://issuer.example/jwks?sig=REDACTED&v=REDACTED"},
		{"https://i.example/k?flag&key=abc=def&&=x",
		 "https://i.example/k?flag&key=REDACTED&&=REDACTED"},
		{"https://i.example/k?", "https://i.example/k?"},
	};
	for (size_t i = 0; i < sizeof redacted / sizeof redacted[0]; i++) {
		char *r = fetch_url_redacted(redacted[i][0]);
		ck_assert_str_eq(r, redacted[i][1]);
		free(r);
	}
	char *e = fetch_form_encode("a b&c=d/é");
	ck_assert_str_eq(e, "a%20b%26c%3Dd%2F%C3%A9");
	free(e);
}
END_TEST

CHECK_SUITE(jwt)
{
	Suite *s = suite_create("jwt");
	TCase *tc = tcase_create("tokens");
	tcase_add_unchecked_fixture(tc, jwt_setup, jwt_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, accepts_a_good_token);
	tcase_add_test(tc, refuses_bad_claims);
	tcase_add_test(tc, refuses_times_out_of_range);
	tcase_add_test(tc, refuses_bad_signatures_and_algorithms);
	tcase_add_test(tc, unknown_kid_is_reported_for_a_refresh);
	tcase_add_test(tc, algorithm_lists);
	tcase_add_test(tc, bearer_header);
	tcase_add_test(tc, outbound_url_policy);
	suite_add_tcase(s, tc);
	return s;
}
