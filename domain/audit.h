/* The audit log: one row per tools/call, whatever its outcome. Writes (report_damage) record
 * their row in their own transaction; reads have theirs written by the statement that reads them
 * (domain/reads.c, fleet.audit_reads: the read and its row commit together); this module
 * records the others (invalid arguments, missing scope, refused confirmation, failures) one by
 * one. */
#ifndef BIKAROO_AUDIT_H
#define BIKAROO_AUDIT_H

#include "types.h"

/* One audit entry. Every pointer is borrowed; target, detail and request_id may be NULL.
 * A new column is a new field here, a line in audit.c's audit_fields, a parameter of
 * fleet.audit_as and a key of fleet.audit_reads's calls (reads.c). */
struct audit_entry {
	const char *tool;
	const char *target;      /* e.g. the bikeId argument */
	const char *args_digest; /* SHA-256 hex of the canonical arguments */
	const char *outcome;     /* ok|replayed|denied|invalid|not_found|conflict|failed|error|
				    declined|confirmation_required|rejected */
	const char *detail;
	/* The request: its JSON-RPC id, optionally preceded by its W3C trace id (32 lowercase hex
	 * digits) and a space; fleet.audit_record stores them apart (trace_id, request_id). */
	const char *request_id;
};

/* Appends the entry stamped with actor's subject and client application (never a token), in a
 * transaction of its own. Needs no write right of the actor: denials are recorded too. */
enum fleet_status audit_record(const struct fleet_actor *actor, const struct audit_entry *e)
	__attribute__((warn_unused_result));

/* A slice of a request reference: len bytes at p, or p NULL when that part is absent. */
struct audit_ref_part {
	const char *p;
	size_t len;
};

/* The three parts of a request reference (adapter_request_ref): the trace id ("<32 lowercase hex
 * digits> " at the start), the token's reference ("jti:..." or "sha256:...", printable, no
 * space, followed by a space), then the JSON-RPC id; the same split as fleet.audit_ref, which the
 * single-row writers use. Reads send the parts apart: splitting them in SQL cost more than the
 * INSERT itself. Slices of ref (borrowed); ref NULL: all three absent. */
void audit_ref_parts(const char *ref, struct audit_ref_part *trace, struct audit_ref_part *token,
		     struct audit_ref_part *id);

#endif
