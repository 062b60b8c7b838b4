/* The audit log: one row per tools/call, whatever its outcome. Calls decided in the database
 * (report_damage, a denied read) write their row in their own transaction; this module records
 * the others (invalid arguments, missing scope, refused confirmation, failures) one by one, and
 * the rows of allowed reads by group commit (audit_record_read). */
#ifndef BIKAROO_AUDIT_H
#define BIKAROO_AUDIT_H

#include "types.h"

/* One audit entry. Every pointer is borrowed; target, detail and request_id may be NULL.
 * A new column is a new field here, a line in audit.c's audit_fields and a parameter of
 * fleet.audit_as / fleet.audit_batch. */
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

/* A read whose row will come to audit_record_read() begins (call before its statement): a
 * batch's leader waits a little for the rows of reads under way. audit_read_cancel() when the
 * read ends without a row to record (its statement failed). */
void audit_read_begin(void);
void audit_read_cancel(void);

/* The same for a read that has been allowed (outcome ok or not_found), by group commit: the
 * entry joins the batch being formed; the first caller without a batch in flight leads it: it
 * waits at most AUDIT_LINGER_US, and only while the reads begun (audit_read_begin) before it
 * started waiting have not queued their rows yet, then writes the batch (one fleet.audit_batch
 * INSERT of at most AUDIT_BATCH_MAX rows). A row thus waits at most for the batch in flight, then
 * the linger and its own. Ends the read begun by audit_read_begin(). Returns once the row's batch
 * has committed (FLEET_OK) or failed (FLEET_UNAVAILABLE for every row of that batch: the read must
 * then not answer). Thread-safe; actor and e are borrowed until it returns. */
enum fleet_status audit_record_read(const struct fleet_actor *actor, const struct audit_entry *e)
	__attribute__((warn_unused_result));

#define AUDIT_BATCH_MAX 64
#define AUDIT_LINGER_US 1000

#endif
