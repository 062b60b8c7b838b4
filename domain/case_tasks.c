/* Tasks: one statement per call, as the caller (tasks.h). */
#include "case_tasks.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"

/* The columns every task function returns, by name. */
enum {
	T_ID,
	T_TOOL,
	T_STATUS,
	T_MESSAGE,
	T_CREATED,
	T_UPDATED,
	T_TTL,
	T_POLL,
	T_ERROR,
	T_RESULT,
	T_NCOLS
};
static const char *const case_tasks_columns[T_NCOLS] = {
	[T_ID] = "task_id",
	[T_TOOL] = "tool",
	[T_STATUS] = "status",
	[T_MESSAGE] = "message",
	[T_CREATED] = "created_at_ms",
	[T_UPDATED] = "updated_at_ms",
	[T_TTL] = "ttl_ms",
	[T_POLL] = "poll_ms",
	[T_ERROR] = "is_error",
	[T_RESULT] = "result",
};

/* The task's columns (v[T_...]: texts as PostgreSQL writes them, NULL for SQL NULL) into out. */
static void case_tasks_fill(const char *const *v, struct case_task *out)
{
	db_copy(out->id, sizeof out->id, v[T_ID] ? v[T_ID] : "");
	db_copy(out->tool, sizeof out->tool, v[T_TOOL] ? v[T_TOOL] : "");
	const char *st = v[T_STATUS] ? v[T_STATUS] : "";
	out->status = strcmp(st, "completed") == 0   ? CASE_TASK_COMPLETED
		      : strcmp(st, "cancelled") == 0 ? CASE_TASK_CANCELLED
						     : CASE_TASK_WORKING;
	db_copy(out->message, sizeof out->message, v[T_MESSAGE] ? v[T_MESSAGE] : "");
	out->created_ms = v[T_CREATED] ? strtoll(v[T_CREATED], NULL, 10) : 0;
	out->updated_ms = v[T_UPDATED] ? strtoll(v[T_UPDATED], NULL, 10) : 0;
	out->ttl_ms = v[T_TTL] ? strtoll(v[T_TTL], NULL, 10) : -1;
	out->poll_ms = v[T_POLL] ? strtol(v[T_POLL], NULL, 10) : 0;
	out->is_error = v[T_ERROR] && strcmp(v[T_ERROR], "t") == 0;
	out->result = v[T_RESULT] ? mem_strdup(v[T_RESULT]) : NULL;
}

/* Row 0 of res (what: the function) into out; FLEET_NOT_FOUND without a row. */
static enum fleet_status case_tasks_row(PGresult *res, const char *what, struct case_task *out)
{
	int col[T_NCOLS];
	if (db_columns(res, what, case_tasks_columns, T_NCOLS, col) != FLEET_OK)
		return FLEET_INTERNAL;
	if (PQntuples(res) < 1)
		return FLEET_NOT_FOUND;
	const char *v[T_NCOLS];
	for (int i = 0; i < T_NCOLS; i++)
		v[i] = PQgetisnull(res, 0, col[i]) ? NULL : PQgetvalue(res, 0, col[i]);
	case_tasks_fill(v, out);
	return FLEET_OK;
}

enum fleet_status case_tasks_from_json(const char *json, struct case_task *out)
{
	memset(out, 0, sizeof *out);
	json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
	enum fleet_status st = json_is_object(o) && json_is_string(json_object_get(o, "task_id"))
				       ? FLEET_OK
				       : FLEET_INTERNAL;
	/* The same texts as a row of the function would hold: numbers and booleans as PostgreSQL
	 * writes them, the result as JSON text. */
	char nums[T_NCOLS][24], *texts[T_NCOLS] = {NULL};
	const char *v[T_NCOLS] = {NULL};
	for (int i = 0; st == FLEET_OK && i < T_NCOLS; i++) {
		json_t *x = json_object_get(o, case_tasks_columns[i]);
		if (json_is_string(x))
			v[i] = json_string_value(x);
		else if (json_is_integer(x)) {
			snprintf(nums[i], sizeof nums[i], "%lld", (long long)json_integer_value(x));
			v[i] = nums[i];
		} else if (json_is_boolean(x))
			v[i] = json_is_true(x) ? "t" : "f";
		else if (x && !json_is_null(x))
			v[i] = texts[i] = json_dumps(x, JSON_COMPACT);
	}
	if (st == FLEET_OK)
		case_tasks_fill(v, out);
	else
		log_error("a write answered a task that is not one: %.200s", json);
	for (int i = 0; i < T_NCOLS; i++)
		free(texts[i]);
	json_decref(o);
	return st;
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
