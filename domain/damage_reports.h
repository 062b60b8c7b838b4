/* Damage reports: report_damaged_bike's business operation, one round trip to PostgreSQL as
 * the acting identity (fleet.report_damage_as).
 * No MCP, JSON-RPC or HTTP here. */
#ifndef BIKAROO_DAMAGE_REPORTS_H
#define BIKAROO_DAMAGE_REPORTS_H

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

#define REPORT_DESCRIPTION_MAX 2000 /* characters (code points), not bytes */
#define REPORT_KEY_MAX 200          /* idempotency key: characters (code points), as its schema */
/* The bytes those characters can take in UTF-8 (4 a character): the ceiling a key's text is held
 * to whatever its encoding (docs/limits.md). */
#define REPORT_KEY_BYTES_MAX (4 * REPORT_KEY_MAX)
#define REPORT_DIGEST_HEX 65 /* SHA-256 hex + NUL */

/* What to report. Every pointer is borrowed; NULL = absent for the optional ones. */
struct report_request {
	const char *tool; /* the calling tool's name (its audit rows and idempotency keys) */
	const char *bike_id;
	const char *issue;           /* one of the docs/domain.md issue codes */
	const char *description;     /* optional, <= REPORT_DESCRIPTION_MAX characters */
	const char *case_id;         /* optional: an open case of this bike to extend */
	const char *idempotency_key; /* optional, 1 to REPORT_KEY_MAX characters: scoped to the
				      * acting subject */
	const char *args_digest;     /* SHA-256 hex of the canonical arguments (audit, key) */
	const char *request_id;      /* JSON-RPC id as text, for the audit row (may be NULL) */
	/* The user confirmed this call (or the client application needs no confirmation). */
	bool confirmed;
};

/* Why a report was refused beyond the generic statuses. */
enum report_problem {
	REPORT_PROBLEM_NONE = 0,
	REPORT_PROBLEM_CASE_NOT_FOUND,  /* unknown or not visible to the caller: the same */
	REPORT_PROBLEM_CASE_CLOSED,     /* visible but no longer open */
	REPORT_PROBLEM_CASE_OTHER_BIKE, /* visible and open, but about another bike */
	REPORT_PROBLEM_KEY_REUSED,      /* idempotency key used before with other arguments */
	/* With FLEET_FORBIDDEN: the first condition that failed, in this order. */
	REPORT_PROBLEM_NO_SCOPE,  /* the token lacks fleet:report */
	REPORT_PROBLEM_MACHINE,   /* a machine client (sub = client), which never reports */
	REPORT_PROBLEM_NOT_KNOWN, /* no active principal through an active application */
	REPORT_PROBLEM_ROLE,      /* the role is neither customer_care nor fleet_operator */
	REPORT_PROBLEM_NOT_HUMAN, /* the principal is not a person acting in person */
	REPORT_PROBLEM_CLIENT,    /* the client application may not report */
};

struct report_result {
	char report_id[FLEET_TEXT_MAX];
	char case_id[FLEET_TEXT_MAX];
	char bike_id[FLEET_BIKE_ID_MAX];
	/* The bike's status after the report; with needs_confirmation, what it would be (the
	 * database's rule, fleet.report_damage_as: compare with status_before, never re-derive). */
	char status[FLEET_TEXT_MAX];
	char recorded_at[FLEET_TIME_MAX];
	bool replayed; /* an earlier call with the same key: nothing was written now */
	/* Set (with FLEET_OK) when the client application requires the user's confirmation and
	 * req->confirmed was false: nothing was written; status and the fields below describe
	 * the effect. */
	bool needs_confirmation;
	char region[FLEET_TEXT_MAX];
	char status_before[FLEET_TEXT_MAX];
	char open_case_id[FLEET_TEXT_MAX]; /* "" = a new case would be opened */
	enum report_problem problem; /* with FLEET_INVALID, FLEET_CONFLICT or FLEET_FORBIDDEN */
	char role[32];               /* with REPORT_PROBLEM_ROLE: the caller's role */
};

/* Files a damage report as actor in one transaction: the report, the bike's status (unavailable
 * unless already in_repair, lost or retired), the case opened or extended, the case event, the
 * status history row and the audit row, all stamped with actor's subject and client.
 * FLEET_FORBIDDEN: scope, role, client application or a non-human subject; FLEET_NOT_FOUND:
 * unknown or out-of-perimeter bike; FLEET_INVALID / FLEET_CONFLICT with out->problem set.
 * Every outcome decided in the database leaves its audit row there. */
enum fleet_status report_damage(const struct fleet_actor *actor, const struct report_request *req,
				struct report_result *out) __attribute__((warn_unused_result));

/* True when issue is one of the docs/domain.md issue codes. */
bool report_issue_valid(const char *issue);

#endif
