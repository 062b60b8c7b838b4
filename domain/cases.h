/* Investigation cases: a case with its damage reports and events, read as the acting identity.
 * No MCP, JSON-RPC or HTTP here. */
#ifndef BIKAROO_CASES_H
#define BIKAROO_CASES_H

#include "audit.h"
#include "types.h"

/* A name shown beside a code or an id: at most 63 characters (fleet.case_for cuts them), so
 * never cut inside a UTF-8 sequence here. */
#define CASES_NAME_MAX 256

/* One entry of a case: its reports and its events, in time order. */
struct case_item {
	bool is_event; /* false: a damage report */
	char id[FLEET_TEXT_MAX];
	char at[FLEET_TIME_MAX];
	char subject[FLEET_ID_MAX];
	char client_id[FLEET_ID_MAX];
	char subject_name[CASES_NAME_MAX]; /* "" = not registered (any more) */
	char client_name[CASES_NAME_MAX];  /* "" = not registered (any more) */
	char kind[FLEET_TEXT_MAX]; /* report: the issue; event: opened|report_added|closed */
	char status_before[FLEET_TEXT_MAX]; /* report only */
	char status_after[FLEET_TEXT_MAX];  /* report only */
	char report_id[FLEET_TEXT_MAX];     /* event only, "" = none */
	char *description;                  /* report only; new memory or NULL */
};

struct case_file {
	char case_id[FLEET_TEXT_MAX];
	char bike_id[FLEET_BIKE_ID_MAX];
	char region[FLEET_TEXT_MAX];
	char region_name[CASES_NAME_MAX];
	char state[FLEET_TEXT_MAX];
	char opened_at[FLEET_TIME_MAX];
	char opened_by[FLEET_ID_MAX];
	char opened_via[FLEET_ID_MAX];
	char opened_by_name[CASES_NAME_MAX];  /* "" = not registered (any more) */
	char opened_via_name[CASES_NAME_MAX]; /* "" = not registered (any more) */
	char closed_at[FLEET_TIME_MAX];       /* "" = open */
	struct case_item *items;              /* new memory: free with cases_free() */
	size_t nitems;
};

/* Reads a case with its reports and events as actor (fleet.case_file_as, through reads.h).
 * FLEET_NOT_FOUND for unknown cases and cases the caller may not see (outside the perimeter;
 * for roles other than fleet_operator, cases they neither opened nor reported into) alike.
 * With audit, the call's one audit row (reads.h). */
enum fleet_status cases_read(const struct fleet_actor *actor, const char *case_id,
			     const struct audit_entry *audit, struct case_file *out)
	__attribute__((warn_unused_result));
void cases_free(struct case_file *c);

#endif
