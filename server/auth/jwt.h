/* RFC 9068 JWT access tokens: signature verification with cjose against a JWKS, and our own
 * header and claim checks (RFC 8725 best practices). No network here: auth.c fetches keys. */
#ifndef BIKAROO_JWT_H
#define BIKAROO_JWT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum jwt_status {
	JWT_OK = 0,
	JWT_INVALID,     /* malformed, bad signature, or a claim check failed */
	JWT_UNKNOWN_KEY, /* well formed, but no key of the set carries its kid */
};

/* Algorithms we verify (bit set); anything else (none, HS*, PS*, ...) is refused. */
enum jwt_alg { JWT_ALG_RS256 = 1u << 0, JWT_ALG_ES256 = 1u << 1 };

struct jwt_keyset; /* opaque, immutable once built: safe to share between threads */

struct jwt_policy {
	const char *issuer;   /* exact `iss` */
	const char *audience; /* must be `aud` or one element of it (our canonical resource URI) */
	const char *audience_why; /* the refusal of another audience, naming this one (NULL: a
				   * generic one) */
	unsigned algs;            /* enum jwt_alg bits */
	long skew;                /* seconds of clock skew tolerated on exp, nbf, iat */
	long max_lifetime;        /* seconds a token may live at most (exp - iat); 0: no maximum */
};

#define JWT_MAX_TOKEN 8192

/* Parses "RS256 ES256" (space or comma separated) into enum jwt_alg bits; 0 when a name is
 * not supported (the caller refuses to start). */
unsigned jwt_parse_algs(const char *list);

/* Builds a key set from a JWKS document (RFC 7517). Keys we cannot use (other types, `use`
 * other than sig, RSA under 2048 bits, EC not P-256) are skipped. *out is new (free with
 * jwt_keyset_free); JWT_INVALID when the document is not a JWKS. */
enum jwt_status jwt_keyset_parse(const char *jwks, size_t len, struct jwt_keyset **out)
	__attribute__((warn_unused_result));
size_t jwt_keyset_size(const struct jwt_keyset *ks);
void jwt_keyset_free(struct jwt_keyset *ks);

/* Verifies token (compact JWS, len bytes) at time now: header (alg allowed and matching the
 * key type, typ at+jwt, no crit/jku/jwk/x5u/x5c), signature, then iss, aud, exp, nbf, iat, and
 * the presence of sub and client_id (or azp). On JWT_OK *claims is a new reference to the
 * payload object. *why (static text, never token content) says what failed. */
enum jwt_status jwt_verify(const struct jwt_keyset *ks, const struct jwt_policy *p,
			   const char *token, size_t len, long now, json_t **claims,
			   const char **why) __attribute__((warn_unused_result));

/* True when aud (string or array) names audience exactly. */
bool jwt_audience_matches(const json_t *aud, const char *audience);
/* A NumericDate claim (exp, nbf, iat) as whole seconds; false when absent, not a number, or
 * outside the years 1970 to 9999. The bound keeps the conversion to long defined and
 * `exp + skew` from overflowing: a token with such a time is refused, never read as another. */
bool jwt_time(const json_t *claims, const char *name, long *out);

/* True when a token expiring at exp lives at most max seconds: exp - iat, or exp - now when
 * claims has no usable iat (max 0: any lifetime). The second case is an introspection answer's
 * only (RFC 7662 makes iat optional): a JWT access token without iat is refused before this
 * (RFC 9068 section 2.2 requires it). */
bool jwt_lifetime_ok(const json_t *claims, long exp, long now, long max);

#endif
