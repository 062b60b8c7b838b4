/* The fleet domain: business operations on bikes, run as an acting identity.
 * No MCP, JSON-RPC or HTTP here: plain structs in, plain structs and a status out. */
#ifndef BIKAROO_FLEET_H
#define BIKAROO_FLEET_H

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
};

#define FLEET_BIKE_ID_MAX 16
#define FLEET_TEXT_MAX 128
#define FLEET_TIME_MAX 40

struct fleet_bike_status {
	char bike_id[FLEET_BIKE_ID_MAX];
	char status[FLEET_TEXT_MAX];
	char status_label[FLEET_TEXT_MAX];
	char region[FLEET_TEXT_MAX];
	char station[FLEET_TEXT_MAX]; /* "" = none */
	int battery_pct;              /* -1 = unknown */
	char last_seen_at[FLEET_TIME_MAX];
	char open_case_id[FLEET_TEXT_MAX]; /* "" = none */
};

/* True when id has the shape of a bike id: ^VL-[0-9]{4,6}$. */
bool fleet_bike_id_valid(const char *id);

/* Reads a bike's status as actor. FLEET_NOT_FOUND for unknown and out-of-perimeter bikes alike;
 * FLEET_FORBIDDEN when the actor's role or client may not read at all. */
enum fleet_status fleet_get_bike_status(const struct fleet_actor *actor, const char *bike_id,
					struct fleet_bike_status *out)
	__attribute__((warn_unused_result));

/* The same read, and in the same round trip the call's audit row (tool get_bike_status, target
 * bike_id, the arguments' digest, outcome ok / not_found / denied, request_id), written through
 * fleet.audit_record. args_digest: SHA-256 hex of the canonical arguments; request_id may be
 * NULL. */
enum fleet_status fleet_get_bike_status_audited(const struct fleet_actor *actor,
						const char *bike_id, const char *args_digest,
						const char *request_id,
						struct fleet_bike_status *out)
	__attribute__((warn_unused_result));

/* One status code of the reference table. */
struct fleet_status_code {
	char code[FLEET_TEXT_MAX];
	char label[FLEET_TEXT_MAX];
	char description[512];
	bool rentable;
};

/* What actor may effectively do, as enum fleet_scope bits: the token's scopes ∩ the subject's
 * role ∩ the client application's rights, and a human subject for fleet:report (a machine
 * token or a principal with is_human = false never reports). Perimeters still apply per object.
 * FLEET_UNAVAILABLE when the database cannot say. */
enum fleet_status fleet_effective_scopes(const struct fleet_actor *actor, unsigned *scopes)
	__attribute__((warn_unused_result));

/* True in *dev when the database's owner marked it as a development database
 * (fleet.settings environment = development). */
enum fleet_status fleet_is_development_db(bool *dev) __attribute__((warn_unused_result));

const char *fleet_status_name(enum fleet_status st);

/* True when region is an element of regions, a PostgreSQL text array literal such as
 * {FR-LYO,FR-PAR} (the perimeter fleet.act_as() returns). Both borrowed. */
bool fleet_in_perimeter(const char *regions, const char *region);

#endif
