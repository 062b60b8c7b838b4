/* Writes: one call of the write's function per call (writes.h). */
#include "writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/task.h"
#include "domain/audit.h"
#include "domain/pg/db.h"

/* A write must answer a fifth of what is left of its call before the call's deadline (at most
 * this): the rest is for the audit row of an attempt that ran out of time, written in a
 * transaction of its own, since the server rolled back the write's with everything it wrote. */
#define WRITES_RESERVE_MAX_MS 500

/* The answer's columns besides the rights (fleet.write_answer). */
enum {
	WRITES_OUTCOME,
	WRITES_REGION,
	WRITES_EFFECT,
	WRITES_RESULT,
	WRITES_TASK,
	WRITES_VERSION,
	WRITES_NFIXED
};
static const char *const writes_fixed[WRITES_NFIXED] = {"outcome", "region", "effect",
							"result",  "task",   "version"};

#define WRITES_NPARAMS 12 /* fleet.write_call's fields */

/* Runs the statement, once more on a deadlock or serialization failure (the functions' lock
 * order avoids both; this is the safety net), a unique violation read as a conflict; by the
 * call's deadline less the audit row's reserve. */
static PGresult *writes_exec(const struct writes_query *q, const char *const *params,
			     enum fleet_status *st, struct writes_result *out)
{
	char *sql =
		mem_printf("SELECT (a.acting).*, a.outcome, a.region, a.effect, a.result, a.task,"
			   " a.version FROM %s(($1, $2, $3::jsonb, $4, $5, $6, $7, $8::boolean, $9,"
			   " $10, $11::bigint, $12)::fleet.write_call) a",
			   q->function);
	long long deadline = task_deadline(), left = deadline - loop_now_ms();
	if (deadline && left > 0)
		task_deadline_at(deadline - (left / 5 < WRITES_RESERVE_MAX_MS
						     ? left / 5
						     : WRITES_RESERVE_MAX_MS));
	PGresult *res = NULL;
	for (int attempt = 0; !res; attempt++) {
		struct db_error err;
		res = db_exec(q->function, sql, WRITES_NPARAMS, params, &err);
		*st = err.st;
		if (res || attempt >= 2 ||
		    (strcmp(err.sqlstate, "40P01") != 0 && strcmp(err.sqlstate, "40001") != 0)) {
			/* Unique constraints see every region: say nothing of what collided. */
			if (!res && strcmp(err.sqlstate, "23505") == 0) {
				*st = FLEET_CONFLICT;
				snprintf(out->outcome, sizeof out->outcome, "conflict");
			}
			break;
		}
	}
	task_deadline_at(deadline);
	free(sql);
	return res;
}

/* The first of the rights' conditions that refuses (the database judged them too). */
static enum writes_refusal writes_judge(const struct writes_query *q,
					const struct fleet_actor *actor, const struct rights *r)
{
	if (!r->known)
		return WRITES_REFUSAL_NOT_KNOWN;
	if (!rights_may_use(actor, r, q->scope, q->roles, false))
		return rights_may_use(actor, r, q->scope, NULL, false) ? WRITES_REFUSAL_ROLE
								       : WRITES_REFUSAL_CLIENT;
	if (q->people_only && !r->human)
		return WRITES_REFUSAL_NOT_PERSON;
	return WRITES_REFUSAL_NONE;
}

/* outcome -> status, for the outcomes that are not a result. */
static enum fleet_status writes_status(const char *outcome)
{
	if (strcmp(outcome, "ok") == 0 || strcmp(outcome, "replayed") == 0 ||
	    strcmp(outcome, "confirmation_required") == 0)
		return FLEET_OK;
	if (strcmp(outcome, "not_found") == 0)
		return FLEET_NOT_FOUND;
	if (strcmp(outcome, "key_conflict") == 0)
		return FLEET_CONFLICT;
	if (strcmp(outcome, "forbidden") == 0)
		return FLEET_FORBIDDEN;
	for (const char *p = outcome; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
			return FLEET_INTERNAL;
	return *outcome ? FLEET_INVALID : FLEET_INTERNAL;
}

static enum fleet_status writes_call(const struct writes_query *q, const struct fleet_actor *actor,
				     const struct writes_request *req, struct writes_result *out)
{
	/* Refused before the database is asked, so nothing can be written. */
	if (!(actor->scopes & q->scope)) {
		out->refusal = WRITES_REFUSAL_SCOPE;
		return FLEET_FORBIDDEN;
	}
	if (q->people_only && actor->machine) {
		out->refusal = WRITES_REFUSAL_MACHINE;
		return FLEET_FORBIDDEN;
	}
	char ttl[24];
	snprintf(ttl, sizeof ttl, "%lld", req->task_ttl_ms);
	const char *params[WRITES_NPARAMS] = {actor->subject,
					      actor->client_id,
					      req->args,
					      req->tool,
					      req->key,
					      req->digest,
					      req->request_id,
					      req->confirmed ? "true" : "false",
					      req->target,
					      req->task_id,
					      req->task_id ? ttl : NULL,
					      req->confirmed ? req->version : NULL};
	enum fleet_status st;
	PGresult *res = writes_exec(q, params, &st, out);
	if (!res)
		return st;
	int fixed[WRITES_NFIXED];
	if (PQntuples(res) != 1 ||
	    rights_read_row(res, q->function, "", &out->rights) != FLEET_OK ||
	    db_columns(res, q->function, writes_fixed, WRITES_NFIXED, fixed) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	db_copy(out->outcome, sizeof out->outcome, PQgetvalue(res, 0, fixed[WRITES_OUTCOME]));
	st = writes_status(out->outcome);
	/* Second, independent line: the rights the database returned, judged here too. */
	out->refusal = writes_judge(q, actor, &out->rights);
	if (out->refusal || st == FLEET_FORBIDDEN) {
		if (!out->refusal || st != FLEET_FORBIDDEN)
			log_error("%s rights: the database said %s, the C check %s", q->function,
				  out->outcome, out->refusal ? "refuses" : "allows");
		if (!out->refusal)
			out->refusal = WRITES_REFUSAL_CLIENT;
		st = FLEET_FORBIDDEN;
		goto out;
	}
	/* What an answer names (a result, a refusal's object as it stands) is in the perimeter. */
	const char *region = PQgetvalue(res, 0, fixed[WRITES_REGION]);
	if ((st == FLEET_OK || st == FLEET_INVALID) && !PQgetisnull(res, 0, fixed[WRITES_REGION]) &&
	    !rights_in_perimeter(out->rights.regions, region)) {
		log_error("%s: the database answered for an object outside the perimeter",
			  q->function);
		st = FLEET_NOT_FOUND;
		goto out;
	}
	if (st == FLEET_INTERNAL)
		log_error("%s: unexpected outcome %s", q->function, out->outcome);
	if (!PQgetisnull(res, 0, fixed[WRITES_EFFECT]))
		out->effect = mem_strdup(PQgetvalue(res, 0, fixed[WRITES_EFFECT]));
	if (!PQgetisnull(res, 0, fixed[WRITES_RESULT]))
		out->result = mem_strdup(PQgetvalue(res, 0, fixed[WRITES_RESULT]));
	if (!PQgetisnull(res, 0, fixed[WRITES_VERSION]))
		out->version = mem_strdup(PQgetvalue(res, 0, fixed[WRITES_VERSION]));
	if (st == FLEET_OK && !PQgetisnull(res, 0, fixed[WRITES_TASK])) {
		/* Committed with the write: a task that cannot be read is our bug, logged. */
		out->tasked = case_tasks_from_json(PQgetvalue(res, 0, fixed[WRITES_TASK]),
						   &out->task) == FLEET_OK;
	}
out:
	PQclear(res);
	return st;
}

/* The audit row of an outcome the database did not record: refused before it was asked, not
 * answered, or rolled back by another change (it records every other, in the write's own
 * transaction). */
static void writes_audit(const struct writes_query *q, const struct fleet_actor *actor,
			 const struct writes_request *req, enum fleet_status st,
			 const struct writes_result *r)
{
	struct audit_entry e = {.tool = req->tool,
				.target = req->target,
				.args_digest = req->digest,
				.request_id = req->request_id};
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
		e.outcome = "error", e.detail = fleet_status_name(st);
	else if (r->refusal == WRITES_REFUSAL_SCOPE)
		e.outcome = "denied",
		e.detail = q->scope == FLEET_SCOPE_REPORT ? "fleet:report" : "fleet:read";
	else if (r->refusal == WRITES_REFUSAL_MACHINE)
		e.outcome = "denied", e.detail = "a machine client";
	else if (st == FLEET_CONFLICT && strcmp(r->outcome, "conflict") == 0)
		e.outcome = "conflict", e.detail = "unique violation";
	else
		return;
	if (audit_record(actor, &e) != FLEET_OK)
		log_warn("%s: audit row missing for %s", q->function, e.outcome);
}

enum fleet_status writes_run(const struct writes_query *q, const struct fleet_actor *actor,
			     const struct writes_request *req, struct writes_result *out)
{
	memset(out, 0, sizeof *out);
	enum fleet_status st = writes_call(q, actor, req, out);
	writes_audit(q, actor, req, st, out);
	return st;
}

void writes_result_free(struct writes_result *r)
{
	free(r->effect);
	free(r->result);
	free(r->version);
	case_tasks_free(&r->task);
	r->effect = NULL;
	r->result = NULL;
	r->version = NULL;
	r->tasked = false;
}
