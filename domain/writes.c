/* Writes: one call of the write's function per call (writes.h). */
#include "writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/task.h"
#include "domain/pg/db.h"

/* A write must answer a fifth of what is left of its call before the call's deadline (at most
 * this): the rest is for the audit row of an attempt that ran out of time, written in a
 * transaction of its own, since the server rolled back the write's with everything it wrote. */
#define WRITES_RESERVE_MAX_MS 500

/* The function's fixed columns after the rights. */
enum { WRITES_OUTCOME, WRITES_REGION, WRITES_EFFECT, WRITES_NFIXED };
static const char *const writes_fixed[WRITES_NFIXED] = {"outcome", "region", "effect"};

/* Runs the statement, once more on a deadlock or serialization failure (the functions' lock
 * order avoids both; this is the safety net), a unique violation read as a conflict; by the
 * call's deadline less the audit row's reserve. */
static PGresult *writes_exec(const struct writes_query *q, const char *const *params,
			     enum fleet_status *st, struct writes_result *out)
{
	char *sql =
		mem_printf("SELECT * FROM %s($1, $2, $3::jsonb, $4, $5, $6, $7, $8)", q->function);
	long long deadline = task_deadline(), left = deadline - loop_now_ms();
	if (deadline && left > 0)
		task_deadline_at(deadline - (left / 5 < WRITES_RESERVE_MAX_MS
						     ? left / 5
						     : WRITES_RESERVE_MAX_MS));
	PGresult *res = NULL;
	for (int attempt = 0; !res; attempt++) {
		struct db_error err;
		res = db_exec(q->function, sql, 8, params, &err);
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

enum fleet_status writes_run(const struct writes_query *q, const struct fleet_actor *actor,
			     const struct writes_request *req, struct writes_result *out)
{
	memset(out, 0, sizeof *out);
	/* Refused before the database is asked, so nothing can be written. */
	if (!(actor->scopes & q->scope)) {
		out->refusal = WRITES_REFUSAL_SCOPE;
		return FLEET_FORBIDDEN;
	}
	if (q->people_only && actor->machine) {
		out->refusal = WRITES_REFUSAL_MACHINE;
		return FLEET_FORBIDDEN;
	}
	const char *params[8] = {actor->subject,  actor->client_id,
				 req->args,       req->tool,
				 req->key,        req->digest,
				 req->request_id, req->confirmed ? "true" : "false"};
	enum fleet_status st;
	PGresult *res = writes_exec(q, params, &st, out);
	if (!res)
		return st;
	int fixed[WRITES_NFIXED], *own = mem_calloc(q->ncolumns + 1, sizeof *own);
	if (PQntuples(res) != 1 ||
	    rights_read_row(res, q->function, "", &out->rights) != FLEET_OK ||
	    db_columns(res, q->function, writes_fixed, WRITES_NFIXED, fixed) != FLEET_OK ||
	    db_columns(res, q->function, q->columns, q->ncolumns, own) != FLEET_OK) {
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
	const char *region = PQgetvalue(res, 0, fixed[WRITES_REGION]);
	if (st == FLEET_OK && !PQgetisnull(res, 0, fixed[WRITES_REGION]) &&
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
	out->values = mem_calloc(q->ncolumns + 1, sizeof *out->values);
	out->nvalues = q->ncolumns;
	for (size_t i = 0; i < q->ncolumns; i++)
		if (!PQgetisnull(res, 0, own[i]))
			out->values[i] = mem_strdup(PQgetvalue(res, 0, own[i]));
out:
	free(own);
	PQclear(res);
	return st;
}

void writes_result_free(struct writes_result *r)
{
	for (size_t i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	free(r->values);
	free(r->effect);
	r->values = NULL;
	r->effect = NULL;
	r->nvalues = 0;
}
