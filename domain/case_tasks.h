/* Tasks of the business workflow (a case's inspection, a write-off awaiting approval), kept as
 * rows of fleet.tasks bound to the subject and client application that created them: opened by
 * the write whose step waits, in its own transaction (fleet.task_open; writes.h hands it over),
 * their state the case's step, read as the caller (fleet.task_for): every instance answers the
 * same, after any restart. No MCP here: the Tasks extension's provider
 * (server/capabilities/task_provider.c) maps these to the protocol's tasks. */
#ifndef BIKAROO_CASE_TASKS_H
#define BIKAROO_CASE_TASKS_H

#include "types.h"

#define CASE_TASK_ID_MAX 128
#define CASE_TASK_TOOL_MAX 129 /* a tool's name, NUL included */

enum case_task_status { CASE_TASK_WORKING, CASE_TASK_COMPLETED, CASE_TASK_CANCELLED };

/* One task as the database states it. */
struct case_task {
	char id[CASE_TASK_ID_MAX + 1];
	char tool[CASE_TASK_TOOL_MAX]; /* the tool whose call opened it: the result is that tool's
					*/
	enum case_task_status status;
	char message[512];                /* the step in words */
	long long created_ms, updated_ms; /* since the epoch */
	long long ttl_ms;                 /* < 0: unlimited */
	long poll_ms;
	bool is_error; /* completed: the call's result is a refusal (isError) */
	char *result;  /* completed: the tool's result by column names, JSON text (new), or NULL */
	/* case_tasks_notice only: whom it belongs to. */
	char subject[FLEET_ID_MAX], client[FLEET_ID_MAX];
};

/* The task a write opened, as its answer states it (json: fleet.task_for's columns as a JSON
 * object, borrowed) into *out: FLEET_INTERNAL when it is not that. */
enum fleet_status case_tasks_from_json(const char *json, struct case_task *out)
	__attribute__((warn_unused_result));
/* Task id as actor sees it: FLEET_NOT_FOUND for one never issued, expired, or another's alike. */
enum fleet_status case_tasks_get(const struct fleet_actor *actor, const char *id,
				 struct case_task *out) __attribute__((warn_unused_result));
/* Asks task id of actor to stop (cooperative: a finished one stays as it is); *out after. */
enum fleet_status case_tasks_cancel(const struct fleet_actor *actor, const char *id,
				    struct case_task *out) __attribute__((warn_unused_result));
/* Task id whoever owns it, with its owner (subject, client): for the change feed, which tells
 * only the owner's listens. FLEET_NOT_FOUND when it is gone. */
enum fleet_status case_tasks_notice(const char *id, struct case_task *out)
	__attribute__((warn_unused_result));
void case_tasks_free(struct case_task *t);

#endif
