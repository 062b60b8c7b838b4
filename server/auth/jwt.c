/* JWT access-token verification: cjose checks signatures; every other decision is here. */
#include "jwt.h"

#include <cjose/cjose.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/b64.h"
#include "common/mem.h"

struct jwt_key {
	char kid[128]; /* "" when the JWKS gives none */
	unsigned alg;  /* the one enum jwt_alg this key may verify */
	cjose_jwk_t *jwk;
};

struct jwt_keyset {
	struct jwt_key *keys;
	size_t n;
};

#define JWT_MAX_KEYS 64

unsigned jwt_parse_algs(const char *list)
{
	unsigned bits = 0;
	for (const char *p = list; p && *p;) {
		p += strspn(p, " ,");
		size_t n = strcspn(p, " ,");
		if (n == 0)
			break;
		if (n == 5 && strncmp(p, "RS256", 5) == 0)
			bits |= JWT_ALG_RS256;
		else if (n == 5 && strncmp(p, "ES256", 5) == 0)
			bits |= JWT_ALG_ES256;
		else
			return 0;
		p += n;
	}
	return bits;
}

static unsigned jwt_alg_bit(const char *alg)
{
	if (!alg)
		return 0;
	if (strcmp(alg, "RS256") == 0)
		return JWT_ALG_RS256;
	if (strcmp(alg, "ES256") == 0)
		return JWT_ALG_ES256;
	return 0;
}

enum jwt_status jwt_keyset_parse(const char *jwks, size_t len, struct jwt_keyset **out)
{
	*out = NULL;
	json_error_t e;
	json_t *doc = json_loadb(jwks, len, JSON_REJECT_DUPLICATES, &e);
	json_t *keys = json_object_get(doc, "keys");
	if (!json_is_array(keys)) {
		json_decref(doc);
		return JWT_INVALID;
	}
	struct jwt_keyset *ks = mem_calloc(1, sizeof *ks);
	ks->keys = mem_calloc(JWT_MAX_KEYS, sizeof *ks->keys);
	size_t i;
	json_t *k;
	json_array_foreach (keys, i, k) {
		if (ks->n == JWT_MAX_KEYS)
			break;
		const char *kty = json_string_value(json_object_get(k, "kty"));
		const char *use = json_string_value(json_object_get(k, "use"));
		const char *alg = json_string_value(json_object_get(k, "alg"));
		const char *kid = json_string_value(json_object_get(k, "kid"));
		if (!kty || (use && strcmp(use, "sig") != 0) || (kid && strlen(kid) >= 128))
			continue;
		unsigned want;
		if (strcmp(kty, "RSA") == 0)
			want = JWT_ALG_RS256;
		else if (strcmp(kty, "EC") == 0)
			want = JWT_ALG_ES256;
		else
			continue; /* "oct" and others: never a verification key for us */
		if (alg && jwt_alg_bit(alg) != want)
			continue;
		/* Import only the public members: a JWKS should not carry private ones. */
		json_t *pub =
			strcmp(kty, "RSA") == 0
				? json_pack("{s:s, s:O, s:O}", "kty", "RSA", "n",
					    json_object_get(k, "n"), "e", json_object_get(k, "e"))
				: json_pack("{s:s, s:O, s:O, s:O}", "kty", "EC", "crv",
					    json_object_get(k, "crv"), "x", json_object_get(k, "x"),
					    "y", json_object_get(k, "y"));
		if (!pub)
			continue;
		cjose_err err;
		cjose_jwk_t *jwk = cjose_jwk_import_json((cjose_header_t *)pub, &err);
		json_decref(pub);
		if (!jwk)
			continue;
		bool usable = want == JWT_ALG_RS256
				      ? cjose_jwk_get_keysize(jwk, &err) >= 2048
				      : cjose_jwk_EC_get_curve(jwk, &err) == CJOSE_JWK_EC_P_256;
		if (!usable) {
			cjose_jwk_release(jwk);
			continue;
		}
		struct jwt_key *slot = &ks->keys[ks->n++];
		snprintf(slot->kid, sizeof slot->kid, "%s", kid ? kid : "");
		slot->alg = want;
		slot->jwk = jwk;
	}
	json_decref(doc);
	*out = ks;
	return JWT_OK;
}

size_t jwt_keyset_size(const struct jwt_keyset *ks)
{
	return ks ? ks->n : 0;
}

void jwt_keyset_free(struct jwt_keyset *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->n; i++)
		cjose_jwk_release(ks->keys[i].jwk);
	free(ks->keys);
	free(ks);
}

bool jwt_audience_matches(const json_t *aud, const char *audience)
{
	if (json_is_string(aud))
		return strcmp(json_string_value(aud), audience) == 0;
	if (!json_is_array(aud))
		return false;
	for (size_t i = 0; i < json_array_size(aud); i++) {
		const json_t *a = json_array_get(aud, i);
		if (json_is_string(a) && strcmp(json_string_value(a), audience) == 0)
			return true;
	}
	return false;
}

/* Decodes one base64url segment into a strictly parsed JSON object (new reference). */
static json_t *jwt_segment_json(const char *seg, size_t n)
{
	size_t dlen = 0;
	unsigned char *d = b64_decode(seg, n, true, &dlen);
	if (!d)
		return NULL;
	json_error_t e;
	json_t *j = json_loadb((const char *)d, dlen, JSON_REJECT_DUPLICATES, &e);
	free(d);
	if (j && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static bool jwt_typ_ok(const char *typ)
{
	return typ &&
	       (strcasecmp(typ, "at+jwt") == 0 || strcasecmp(typ, "application/at+jwt") == 0);
}

bool jwt_time(const json_t *claims, const char *name, long *out)
{
	const json_t *v = json_object_get(claims, name);
	if (!json_is_number(v))
		return false;
	double t = json_number_value(v);
	if (!(t >= 0 && t <= 253402300799.0))
		return false;
	*out = (long)t;
	return true;
}

static bool jwt_id_claim_ok(const json_t *v)
{
	const char *s = json_string_value(v);
	return s && *s && strlen(s) < 256;
}

/* Header checks before any key is used; returns the reason or NULL. */
static const char *jwt_header_problem(const json_t *h, const struct jwt_policy *p, unsigned *alg,
				      const char **kid)
{
	static const char *const refused[] = {"crit", "jku", "jwk",     "x5u",
					      "x5c",  "x5t", "x5t#S256"};
	const char *a = json_string_value(json_object_get(h, "alg"));
	*alg = jwt_alg_bit(a);
	if (!*alg || !(*alg & p->algs))
		return "signing algorithm not allowed";
	if (!jwt_typ_ok(json_string_value(json_object_get(h, "typ"))))
		return "not an access token (typ must be at+jwt)";
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if (json_object_get(h, refused[i]))
			return "token header names keys or extensions we do not accept";
	if (json_object_get(h, "enc") || json_object_get(h, "zip"))
		return "encrypted or compressed tokens are not accepted";
	const json_t *k = json_object_get(h, "kid");
	if (k && !json_is_string(k))
		return "kid must be a string";
	*kid = json_string_value(k);
	return NULL;
}

bool jwt_lifetime_ok(const json_t *claims, long exp, long now, long max)
{
	long iat;
	if (!max)
		return true;
	return exp - (jwt_time(claims, "iat", &iat) ? iat : now) <= max;
}

static const char *jwt_claims_problem(const json_t *c, const struct jwt_policy *p, long now)
{
	long exp, nbf, iat;
	if (!json_is_string(json_object_get(c, "iss")) ||
	    strcmp(json_string_value(json_object_get(c, "iss")), p->issuer) != 0)
		return "token issuer is not trusted";
	if (!jwt_audience_matches(json_object_get(c, "aud"), p->audience))
		return p->audience_why ? p->audience_why : "token audience is not this server";
	if (!jwt_time(c, "exp", &exp))
		return "token has no expiry";
	if (now >= exp + p->skew)
		return "token expired";
	if (json_object_get(c, "nbf") && (!jwt_time(c, "nbf", &nbf) || now + p->skew < nbf))
		return "token not valid yet";
	if (!jwt_time(c, "iat", &iat) || iat > now + p->skew)
		return "token issue time is missing or in the future";
	if (!jwt_lifetime_ok(c, exp, now, p->max_lifetime))
		return "token lifetime is longer than this server accepts";
	if (!jwt_id_claim_ok(json_object_get(c, "sub")))
		return "token has no subject";
	if (!jwt_id_claim_ok(json_object_get(c, "client_id")) &&
	    !jwt_id_claim_ok(json_object_get(c, "azp")))
		return "token names no client";
	const json_t *scope = json_object_get(c, "scope");
	if (scope && !json_is_string(scope))
		return "scope must be a string";
	return NULL;
}

enum jwt_status jwt_verify(const struct jwt_keyset *ks, const struct jwt_policy *p,
			   const char *token, size_t len, long now, json_t **claims,
			   const char **why)
{
	*claims = NULL;
	*why = "malformed token";
	if (len == 0 || len > JWT_MAX_TOKEN || memchr(token, '\0', len))
		return JWT_INVALID;
	const char *d1 = memchr(token, '.', len);
	const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
	if (!d1 || !d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token)) ||
	    d2 + 1 == token + len)
		return JWT_INVALID; /* not a signed compact JWS (JWE has 4 dots; alg none no
				       signature) */
	json_t *header = jwt_segment_json(token, (size_t)(d1 - token));
	if (!header)
		return JWT_INVALID;
	enum jwt_status st = JWT_INVALID;
	cjose_jws_t *jws = NULL;
	json_t *payload = NULL;
	unsigned alg = 0;
	const char *kid = NULL;
	const char *problem = jwt_header_problem(header, p, &alg, &kid);
	if (problem) {
		*why = problem;
		goto out;
	}
	cjose_err err;
	jws = cjose_jws_import(token, len, &err);
	if (!jws)
		goto out;
	/* cjose verifies with the alg of the header it parsed: make sure it is the one we checked.
	 */
	const char *cjose_alg =
		json_string_value(json_object_get((json_t *)cjose_jws_get_protected(jws), "alg"));
	if (jwt_alg_bit(cjose_alg) != alg)
		goto out;
	bool found_kid = false, verified = false;
	for (size_t i = 0; ks && i < ks->n && !verified; i++) {
		const struct jwt_key *k = &ks->keys[i];
		if (kid ? strcmp(k->kid, kid) != 0 : false)
			continue;
		found_kid = true;
		if (k->alg != alg)
			continue; /* never verify an algorithm with a key of another type */
		verified = cjose_jws_verify(jws, k->jwk, &err);
	}
	if (!verified) {
		if (kid && !found_kid) {
			*why = "token signed by an unknown key";
			st = JWT_UNKNOWN_KEY;
		} else {
			*why = "token signature is not valid";
		}
		goto out;
	}
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	if (!cjose_jws_get_plaintext(jws, &plain, &plain_len, &err))
		goto out;
	json_error_t je;
	payload = json_loadb((const char *)plain, plain_len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(payload)) {
		*why = "token claims are not a JSON object";
		goto out;
	}
	problem = jwt_claims_problem(payload, p, now);
	if (problem) {
		*why = problem;
		goto out;
	}
	*claims = payload;
	payload = NULL;
	*why = NULL;
	st = JWT_OK;
out:
	json_decref(payload);
	if (jws)
		cjose_jws_release(jws);
	json_decref(header);
	return st;
}
