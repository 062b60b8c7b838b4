/* Tasks: one statement per call, as the caller (tasks.h). */
#include "case_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"

/* The columns every task function returns, by name. */
enum {
	T_ID,
	T_STATUS,
	T_MESSAGE,
	T_CREATED,
	T_UPDATED,
	T_TTL,
	T_POLL,
	T_ERROR,
	T_RESULT,
	T_TOOL,
	T_NCOLS
};
static const char *const case_tasks_columns[T_NCOLS] = {
	[T_ID] = "task_id",
	[T_STATUS] = "status",
	[T_MESSAGE] = "message",
	[T_CREATED] = "created_at_ms",
	[T_UPDATED] = "updated_at_ms",
	[T_TTL] = "ttl_ms",
	[T_POLL] = "poll_ms",
	[T_ERROR] = "is_error",
	[T_RESULT] = "result",
	[T_TOOL] = "tool",
};

/* Row 0 of res (what: the function) into out; FLEET_NOT_FOUND without a row. */
static enum fleet_status case_tasks_row(PGresult *res, const char *what, struct case_task *out)
{
	int col[T_NCOLS];
	if (db_columns(res, what, case_tasks_columns, T_NCOLS, col) != FLEET_OK)
		return FLEET_INTERNAL;
	if (PQntuples(res) < 1)
		return FLEET_NOT_FOUND;
	db_copy(out->id, sizeof out->id, PQgetvalue(res, 0, col[T_ID]));
	const char *st = PQgetvalue(res, 0, col[T_STATUS]);
	out->status = strcmp(st, "completed") == 0   ? CASE_TASK_COMPLETED
		      : strcmp(st, "cancelled") == 0 ? CASE_TASK_CANCELLED
						     : CASE_TASK_WORKING;
	db_copy(out->message, sizeof out->message, PQgetvalue(res, 0, col[T_MESSAGE]));
	out->created_ms = strtoll(PQgetvalue(res, 0, col[T_CREATED]), NULL, 10);
	out->updated_ms = strtoll(PQgetvalue(res, 0, col[T_UPDATED]), NULL, 10);
	out->ttl_ms = PQgetisnull(res, 0, col[T_TTL])
			      ? -1
			      : strtoll(PQgetvalue(res, 0, col[T_TTL]), NULL, 10);
	out->poll_ms = strtol(PQgetvalue(res, 0, col[T_POLL]), NULL, 10);
	out->is_error = db_true(res, 0, col[T_ERROR]);
	db_copy(out->tool, sizeof out->tool, PQgetvalue(res, 0, col[T_TOOL]));
	if (!PQgetisnull(res, 0, col[T_RESULT]))
		out->result = mem_strdup(PQgetvalue(res, 0, col[T_RESULT]));
	return FLEET_OK;
}

/* Runs sql (prepared as name) with params and reads its first row into out. */
static enum fleet_status case_tasks_exec(const char *name, const char *sql, int n,
					 const char *const *params, struct case_task *out)
{
	memset(out, 0, sizeof *out);
	struct db_error err;
	PGresult *res = db_exec(name, sql, n, params, &err);
	if (!res)
		return err.st;
	enum fleet_status st = case_tasks_row(res, name, out);
	if (st == FLEET_OK && strcmp(name, "task_notice") == 0) {
		static const char *const owner[] = {"subject", "client_id"};
		int col[2];
		st = db_columns(res, name, owner, 2, col);
		if (st == FLEET_OK) {
			db_copy(out->subject, sizeof out->subject, PQgetvalue(res, 0, col[0]));
			db_copy(out->client, sizeof out->client, PQgetvalue(res, 0, col[1]));
		}
	}
	PQclear(res);
	return st;
}

enum fleet_status case_tasks_create(const struct fleet_actor *actor, const char *id,
				    const char *case_id, const char *kind, const char *tool,
				    long long ttl_ms, struct case_task *out)
{
	char ttl[24];
	snprintf(ttl, sizeof ttl, "%lld", ttl_ms);
	const char *params[] = {actor->subject, actor->client_id,       id, case_id, kind,
				tool,           ttl_ms < 0 ? NULL : ttl};
	return case_tasks_exec(
		"task_create_as",
		"SELECT * FROM fleet.task_create_as($1, $2, $3, $4, $5, $6, $7::bigint)", 7, params,
		out);
}

enum fleet_status case_tasks_get(const struct fleet_actor *actor, const char *id,
				 struct case_task *out)
{
	const char *params[] = {actor->subject, actor->client_id, id};
	return case_tasks_exec("task_for", "SELECT * FROM fleet.task_for($1, $2, ARRAY[$3::text])",
			       3, params, out);
}

enum fleet_status case_tasks_cancel(const struct fleet_actor *actor, const char *id,
				    struct case_task *out)
{
	const char *params[] = {actor->subject, actor->client_id, id};
	return case_tasks_exec("task_cancel_as", "SELECT * FROM fleet.task_cancel_as($1, $2, $3)",
			       3, params, out);
}

enum fleet_status case_tasks_notice(const char *id, struct case_task *out)
{
	const char *params[] = {id};
	return case_tasks_exec("task_notice", "SELECT * FROM fleet.task_notice($1)", 1, params,
			       out);
}

void case_tasks_free(struct case_task *t)
{
	free(t->result);
	t->result = NULL;
}
