/* Writes of the business as the acting identity, all through one path. A write is a SQL function
 *   fleet.name_as(c fleet.write_call) RETURNS fleet.write_answer
 * (migrations/README.md, "A write function"; the types are 0030's): it decides and enforces in
 * one transaction the roles its capability declares (fleet.capabilities, filled from the
 * declarations by migrate), the confirmation policy, the idempotency key, row-level security, the
 * audit row of every outcome it decides, and the task a step that waits opens. Here, before the
 * database is asked: the token's scope and a machine client (nothing can be written); after:
 * the rights judged again in C (rights.h; both must agree) and the object's region against the
 * perimeter. No MCP, JSON-RPC or HTTP here. */
#ifndef BIKAROO_WRITES_H
#define BIKAROO_WRITES_H

#include <stddef.h>

#include "case_tasks.h"
#include "rights.h"
#include "types.h"

/* A write: its function, and who may call it. */
struct writes_query {
	const char *capability; /* its declaration's name (fleet.capabilities.name) */
	const char *function;   /* schema-qualified: fleet.name_as (lower case, digits and _) */
	unsigned scope;         /* enum fleet_scope bit the token must carry */
	const char *roles;      /* the roles that may (comma-separated; NULL: any) */
	bool people_only;       /* a person acting in person only (never a machine client) */
};

/* One call (fleet.write_call). Every pointer borrowed. */
struct writes_request {
	const char *tool;       /* the calling tool's name (audit rows, idempotency keys) */
	const char *args;       /* the arguments object as JSON text */
	const char *key;        /* idempotency key, or NULL */
	const char *digest;     /* SHA-256 hex of the canonical arguments */
	const char *request_id; /* the audit reference (adapter_request_ref) */
	bool confirmed;         /* the user confirmed this call */
	/* confirmed: the version of what the question the user answered named (the answer's
	 * version, sealed with the question), or NULL: an answer to another version asks again. */
	const char *version;
	const char *target; /* what its audit rows name (the tool's target argument), or NULL */
	/* The task the call may be answered with: its id (unguessable) and lifetime, or NULL when
	 * none may be (a step that waits opens it, in the write's transaction). */
	const char *task_id;
	long long task_ttl_ms;
};

/* Why a write was refused with FLEET_FORBIDDEN: the first condition that failed, in order. */
enum writes_refusal {
	WRITES_REFUSAL_NONE = 0,
	WRITES_REFUSAL_SCOPE,      /* the token lacks the scope (the database was not asked) */
	WRITES_REFUSAL_MACHINE,    /* a machine client, for a people-only write (not asked) */
	WRITES_REFUSAL_NOT_KNOWN,  /* no active principal through an active application */
	WRITES_REFUSAL_ROLE,       /* the role is not one the capability lists */
	WRITES_REFUSAL_NOT_PERSON, /* the principal is not a person acting in person */
	WRITES_REFUSAL_CLIENT,     /* the client application may not */
};

struct writes_result {
	/* The function's outcome: ok, replayed, confirmation_required, forbidden, not_found,
	 * key_conflict or one of its own refusal words; "conflict" for a unique violation. */
	char outcome[48];
	struct rights rights;
	enum writes_refusal refusal; /* with FLEET_FORBIDDEN */
	char *effect;                /* new, or NULL */
	char *version; /* confirmation_required: the version of what it names (new), or NULL */
	/* ok, replayed: the result, a JSON object of the declared columns by their column names
	 * (new text), or NULL; one of the function's own refusals (FLEET_INVALID): what it names
	 * as it stands, the same way, or NULL. */
	char *result;
	bool tasked;           /* ok: the write opened a task, *task */
	struct case_task task; /* tasked: the task as opened (case_tasks_free'd with the result) */
};

/* Runs q as actor. FLEET_OK with outcome ok, replayed or confirmation_required (nothing written);
 * FLEET_FORBIDDEN (out->refusal), FLEET_NOT_FOUND (unknown or out of perimeter alike),
 * FLEET_CONFLICT (key_conflict, or another change at the same time: outcome "conflict"),
 * FLEET_INVALID (one of the function's own refusals: outcome), FLEET_UNAVAILABLE (it may have
 * committed: never run it twice without its key), FLEET_INTERNAL. Every call leaves one audit
 * row: the function's, or, for an outcome it could not record (refused before it was asked,
 * no answer, a conflict that rolled it back), this one's. Free out with writes_result_free()
 * whatever the status. From a task or a thread of its own. */
enum fleet_status writes_run(const struct writes_query *q, const struct fleet_actor *actor,
			     const struct writes_request *req, struct writes_result *out)
	__attribute__((warn_unused_result));
void writes_result_free(struct writes_result *r);

#endif
