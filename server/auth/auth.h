/* Authorization for the HTTP transport (and tokens given to stdio): the server is an OAuth 2.1
 * resource server. Bearer tokens are validated locally as RFC 9068 JWTs against the issuer's
 * JWKS, or by RFC 7662 introspection; the principal comes only from a validated token.
 * Thread-safe: caches are locked, and no lock is held during a network fetch. A fetch from the
 * issuer waits the way a call waits (fetch.h): the calling task parks and its loop goes on. */
#ifndef BIKAROO_AUTH_H
#define BIKAROO_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

enum auth_mode { AUTH_MODE_LOCAL = 0, AUTH_MODE_JWT, AUTH_MODE_INTROSPECTION };

enum auth_status {
	AUTH_OK = 0,
	AUTH_NO_TOKEN,      /* no credentials: 401 challenge without an error code */
	AUTH_BAD_REQUEST,   /* malformed or repeated Authorization header: 400 invalid_request */
	AUTH_INVALID_TOKEN, /* 401 invalid_token */
	AUTH_UNAVAILABLE,   /* issuer unreachable and nothing usable cached: 503 + Retry-After */
	AUTH_CONFIG,        /* the configuration cannot work (start-up only) */
	AUTH_PENDING,       /* auth_validate without wait: the answer needs the issuer */
};

/* The authorization settings (BIKAROO_AUTH_* and BIKAROO_RESOURCE_URI; strings borrowed). */
struct auth_settings {
	const char *mode;          /* "jwt", "introspection" or "local" */
	const char *issuer;        /* the issuer's URL */
	const char *resource_uri;  /* this server's canonical URI, the tokens' audience */
	const char *algs;          /* accepted signature algorithms, comma-separated */
	const char *client_id;     /* introspection: the server's own client */
	const char *client_secret; /* introspection: its secret */
	long skew;                 /* seconds of clock skew tolerated */
	long max_lifetime;         /* longest token lifetime accepted (seconds; 0: any) */
	long timeout_ms;           /* outbound calls to the issuer */
	long refresh_seconds;      /* key refresh cool-down */
	long cache_seconds;        /* validated-token cache */
	bool insecure_loopback;    /* http to a loopback issuer (tests only) */
};

/* Reads the settings (copied). AUTH_CONFIG, logged, when they are incomplete or unsafe. Call
 * once, before any worker thread runs. */
enum auth_status auth_init(const struct auth_settings *set) __attribute__((warn_unused_result));
void auth_cleanup(void);
enum auth_mode auth_mode(void);
/* Readiness (GET /readyz): NULL when tokens can be validated now, else what is missing (static
 * text). In jwt mode the issuer's key set must be loaded: fetched here when there is none yet
 * (within the refresh cool-down), so it may wait (a task, or a thread that serves no loop). */
const char *auth_ready(void);

/* Picks the bearer token out of the Authorization header values of one request (n of them,
 * borrowed). *token points into values[0]; nothing is copied. */
enum auth_status auth_bearer(const char *const *values, size_t n, const char **token, size_t *len)
	__attribute__((warn_unused_result));

/* Validates a bearer token (len bytes, borrowed) and fills *out with the principal it names.
 * *why (static text, never token content) explains a refusal. What the caches and the key set
 * in hand decide is answered at once; what needs the issuer (its metadata, its key set, an
 * introspection) waits for its fetch when wait is set: from a task, or a thread that serves no
 * loop (fetch.h). Without wait that is AUTH_PENDING: ask again with wait from a task. */
enum auth_status auth_validate(const char *token, size_t len, bool wait, struct fleet_actor *out,
			       const char **why) __attribute__((warn_unused_result));

/* RFC 9728 protected-resource metadata: whether a request path is one of the paths we serve it
 * on, and the document (new reference). */
bool auth_prm_path(const char *path);
json_t *auth_prm_document(void);

/* The WWW-Authenticate value for a refusal (new string, caller frees): st is AUTH_NO_TOKEN,
 * AUTH_BAD_REQUEST or AUTH_INVALID_TOKEN, or AUTH_OK with missing_scope for 403
 * insufficient_scope. why (static, may be NULL) becomes error_description. */
char *auth_challenge(enum auth_status st, const char *missing_scope, const char *why);

#endif
