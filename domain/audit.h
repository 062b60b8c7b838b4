/* The audit log: one row per tools/call, whatever its outcome. Calls decided in the database
 * (report_damage) write their row in their own transaction; this module records the others
 * (invalid arguments, missing scope, refused confirmation, reads, failures). */
#ifndef BIKAROO_AUDIT_H
#define BIKAROO_AUDIT_H

#include "types.h"

/* One audit entry. Every pointer is borrowed; target, detail and request_id may be NULL. */
struct audit_entry {
	const char *tool;
	const char *target;      /* e.g. the bikeId argument */
	const char *args_digest; /* SHA-256 hex of the canonical arguments */
	const char *outcome;     /* ok|replayed|denied|invalid|not_found|conflict|failed|error|
				    declined|confirmation_required|rejected */
	const char *detail;
	const char *request_id;
};

/* Appends the entry stamped with actor's subject and client application (never a token).
 * Needs no write right of the actor: denials are recorded too. */
enum fleet_status audit_record(const struct fleet_actor *actor, const struct audit_entry *e)
	__attribute__((warn_unused_result));

#endif
