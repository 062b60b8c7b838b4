/* The domain's vocabulary, types only: who acts (an actor and the scopes it carries) and how a
 * business operation ends (a status). Every layer may include this header; it pulls in nothing
 * but the C library, so the protocol core and the authorization module build without the rest
 * of the domain or libpq. */
#ifndef BIKAROO_DOMAIN_TYPES_H
#define BIKAROO_DOMAIN_TYPES_H

#include <stdbool.h>
#include <stddef.h>

enum fleet_status {
	FLEET_OK = 0,
	FLEET_NOT_FOUND,   /* unknown, or outside the caller's perimeter: deliberately the same */
	FLEET_FORBIDDEN,   /* role or client application does not allow the operation */
	FLEET_INVALID,     /* arguments violate a business rule */
	FLEET_CONFLICT,    /* e.g. an idempotency key reused with other arguments */
	FLEET_UNAVAILABLE, /* the database cannot be reached: retry later */
	FLEET_INTERNAL,    /* our bug or an unexpected database answer */
};

/* OAuth scopes the caller's token carries (bit set). */
enum fleet_scope {
	FLEET_SCOPE_READ = 1u << 0,   /* fleet:read */
	FLEET_SCOPE_REPORT = 1u << 1, /* fleet:report */
};

#define FLEET_ID_MAX 256
#define FLEET_BIKE_ID_MAX 16
#define FLEET_TEXT_MAX 128
#define FLEET_TIME_MAX 40
#define FLEET_TOKEN_REF_MAX 136 /* "jti:" + at most 128 bytes, or "sha256:" + 64 hex */

/* Who acts: the human (or machine) subject and the host application, from a validated token
 * or a configured local identity. Never from tool arguments or clientInfo. */
struct fleet_actor {
	char subject[FLEET_ID_MAX];
	char client_id[FLEET_ID_MAX];
	unsigned scopes; /* enum fleet_scope bits */
	bool machine;    /* a client acting on its own authority (client credentials: sub = client):
			    never reports, whatever its scopes and role */
	long expires_at; /* when its authority ends (a token's exp, seconds since the epoch);
			    0: no end (a configured local identity) */
	/* Which token it acts with, for the audit log, never the token: "jti:" and its jti, or
	 * "sha256:" and the hex digest of the token when it has none; "" without a token. */
	char token_ref[FLEET_TOKEN_REF_MAX];
};

/* A lease from a deployment-wide token bucket (domain/budgets.h; taken by the protocol core's
 * volume limits through the hook the application hands it). */
struct fleet_budget_lease {
	const char *holder; /* a subject or a client application id (borrowed) */
	bool client;        /* holder is a client application (else a subject) */
	bool write;         /* the budget of state-changing calls (else of reads) */
	long want;          /* tokens asked for, 1..burst */
	double per_s;       /* the bucket's refill, tokens a second (> 0) */
	double burst;       /* the bucket's size */
	long granted;       /* out: 0..want, as many as the bucket held */
	double level;       /* out: tokens left in the bucket once the lease is taken */
};

/* The status's name for logs and messages (static). */
static inline const char *fleet_status_name(enum fleet_status st)
{
	switch (st) {
	case FLEET_OK: return "ok";
	case FLEET_NOT_FOUND: return "not_found";
	case FLEET_FORBIDDEN: return "forbidden";
	case FLEET_INVALID: return "invalid";
	case FLEET_CONFLICT: return "conflict";
	case FLEET_UNAVAILABLE: return "unavailable";
	case FLEET_INTERNAL: return "internal";
	}
	return "internal";
}

#endif
