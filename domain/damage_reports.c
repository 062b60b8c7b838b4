/* Damage reports: one call of fleet.report_damage_as per report.
 * PostgreSQL decides and enforces (the function's rights check, row-level security with
 * WITH CHECK stamping, the row lock that serializes reports on one bike); the C side checks
 * what it can before the call (scope, shapes) and re-checks the rights the database returned
 * before it shows anything. It cannot undo a committed write, which is why the write policies
 * themselves require the reporting right (fleet.current_may_report()). */
#include "damage_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "bikes.h"
#include "rights.h"

static const char *const report_issues[] = {
	"rear_wheel_blocked", "flat_tire",    "brake_failure",  "chain_broken",
	"battery_fault",      "frame_damage", "lighting_fault", "other",
};

bool report_issue_valid(const char *issue)
{
	for (size_t i = 0; issue && i < sizeof report_issues / sizeof report_issues[0]; i++)
		if (strcmp(issue, report_issues[i]) == 0)
			return true;
	return false;
}

/* Counts UTF-8 code points: the description and key limits are in characters, as in the JSON
 * Schema. */
static size_t report_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

static enum fleet_status report_check_request(const struct report_request *req)
{
	if (!bikes_id_valid(req->bike_id))
		return FLEET_NOT_FOUND;
	if (!report_issue_valid(req->issue) || !req->args_digest ||
	    strlen(req->args_digest) != REPORT_DIGEST_HEX - 1)
		return FLEET_INVALID;
	if (req->description && report_chars(req->description) > REPORT_DESCRIPTION_MAX)
		return FLEET_INVALID;
	if (req->idempotency_key &&
	    (!*req->idempotency_key || strlen(req->idempotency_key) > REPORT_KEY_BYTES_MAX ||
	     report_chars(req->idempotency_key) > REPORT_KEY_MAX))
		return FLEET_INVALID;
	if (req->case_id && strlen(req->case_id) >= FLEET_TEXT_MAX)
		return FLEET_INVALID;
	return FLEET_OK;
}

/* report_damage_as's columns after the rights, looked up by name once per result. */
enum {
	REPORT_OUTCOME,
	REPORT_BIKE,
	REPORT_REGION,
	REPORT_STATUS_BEFORE,
	REPORT_STATUS,
	REPORT_OPEN_CASE,
	REPORT_ID,
	REPORT_CASE,
	REPORT_RECORDED_AT,
	REPORT_REGIONS, /* the caller's perimeter, in full (rights.regions is bounded) */
	REPORT_NCOLS
};
static const char *const report_columns[REPORT_NCOLS] = {
	[REPORT_OUTCOME] = "out_outcome",
	[REPORT_BIKE] = "out_bike_id",
	[REPORT_REGION] = "out_region",
	[REPORT_STATUS_BEFORE] = "out_status_before",
	[REPORT_STATUS] = "out_status",
	[REPORT_OPEN_CASE] = "out_open_case_id",
	[REPORT_ID] = "out_report_id",
	[REPORT_CASE] = "out_case_id",
	[REPORT_RECORDED_AT] = "out_recorded_at",
	[REPORT_REGIONS] = "out_regions",
};

/* Runs the statement, retrying once on a deadlock or serialization failure (the lock order
 * avoids both; the retry is the safety net) and mapping a unique violation to a conflict. */
static PGresult *report_exec(const char *const *params, enum fleet_status *st)
{
	static const char sql[] = "SELECT * FROM fleet.report_damage_as($1, $2, $3, $4, $5, $6, "
				  "$7, $8, $9, $10, $11)";
	for (int attempt = 0;; attempt++) {
		struct db_error err;
		PGresult *res = db_exec("report_damage_as", sql, 11, params, &err);
		*st = err.st;
		if (res)
			return res;
		const char *state = err.sqlstate;
		if (attempt < 2 && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0))
			continue;
		/* Unique constraints see every region: say nothing about what collided. */
		if (strcmp(state, "23505") == 0)
			*st = FLEET_CONFLICT;
		return NULL;
	}
}

enum fleet_status report_damage(const struct fleet_actor *actor, const struct report_request *req,
				struct report_result *out)
{
	memset(out, 0, sizeof *out);
	/* Refused before the database is asked, so nothing can be written: no fleet:report, or a
	 * machine client (sub = client), which never reports whatever its principal row says. */
	if (!(actor->scopes & FLEET_SCOPE_REPORT) || actor->machine) {
		out->problem = actor->machine ? REPORT_PROBLEM_MACHINE : REPORT_PROBLEM_NO_SCOPE;
		return FLEET_FORBIDDEN;
	}
	enum fleet_status st = report_check_request(req);
	if (st != FLEET_OK)
		return st;
	const char *params[11] = {actor->subject,
				  actor->client_id,
				  req->bike_id,
				  req->issue,
				  req->description,
				  req->case_id,
				  req->idempotency_key,
				  req->args_digest,
				  req->request_id,
				  req->confirmed ? "true" : "false",
				  req->tool};
	PGresult *res = report_exec(params, &st);
	if (!res)
		return st;
	int col[REPORT_NCOLS];
	struct rights rights;
	if (PQntuples(res) != 1 ||
	    rights_read_row(res, "report_damage_as", "out_", &rights) != FLEET_OK ||
	    db_columns(res, "report_damage_as", report_columns, REPORT_NCOLS, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	const char *outcome = PQgetvalue(res, 0, col[REPORT_OUTCOME]);
	bool may = rights_may_report(actor, &rights);
	if (!may || strcmp(outcome, "forbidden") == 0) {
		if (may || strcmp(outcome, "forbidden") != 0)
			log_error("report rights: the database said %s, the C check %s", outcome,
				  may ? "allows" : "refuses");
		st = FLEET_FORBIDDEN;
		/* The first condition that failed, for the refusal's words. */
		out->problem = !rights.known ? REPORT_PROBLEM_NOT_KNOWN
			       : strcmp(rights.role, "customer_care") != 0 &&
					       strcmp(rights.role, "fleet_operator") != 0
				       ? REPORT_PROBLEM_ROLE
			       : !rights.human ? REPORT_PROBLEM_NOT_HUMAN
					       : REPORT_PROBLEM_CLIENT;
		snprintf(out->role, sizeof out->role, "%s", rights.role);
		goto out;
	}
	if (strcmp(outcome, "not_found") == 0) {
		st = FLEET_NOT_FOUND;
		goto out;
	}
	/* Second, independent line: the bike must be in the perimeter the database returned. */
	if (!rights_in_perimeter(PQgetvalue(res, 0, col[REPORT_REGIONS]),
				 PQgetvalue(res, 0, col[REPORT_REGION]))) {
		log_error("report: the database answered for a bike outside the perimeter");
		st = FLEET_NOT_FOUND;
		goto out;
	}
	db_copy(out->bike_id, sizeof out->bike_id, PQgetvalue(res, 0, col[REPORT_BIKE]));
	db_copy(out->region, sizeof out->region, PQgetvalue(res, 0, col[REPORT_REGION]));
	db_copy(out->status_before, sizeof out->status_before,
		PQgetvalue(res, 0, col[REPORT_STATUS_BEFORE]));
	db_copy(out->status, sizeof out->status, PQgetvalue(res, 0, col[REPORT_STATUS]));
	db_copy(out->open_case_id, sizeof out->open_case_id,
		PQgetvalue(res, 0, col[REPORT_OPEN_CASE]));
	db_copy(out->report_id, sizeof out->report_id, PQgetvalue(res, 0, col[REPORT_ID]));
	db_copy(out->case_id, sizeof out->case_id, PQgetvalue(res, 0, col[REPORT_CASE]));
	db_copy(out->recorded_at, sizeof out->recorded_at,
		PQgetvalue(res, 0, col[REPORT_RECORDED_AT]));
	if (strcmp(outcome, "ok") == 0 || strcmp(outcome, "replayed") == 0) {
		out->replayed = outcome[0] == 'r';
		st = *out->report_id && *out->case_id ? FLEET_OK : FLEET_INTERNAL;
	} else if (strcmp(outcome, "confirmation_required") == 0) {
		out->needs_confirmation = true;
		st = FLEET_OK;
	} else if (strcmp(outcome, "key_conflict") == 0) {
		out->problem = REPORT_PROBLEM_KEY_REUSED;
		st = FLEET_CONFLICT;
	} else if (strcmp(outcome, "case_not_found") == 0) {
		out->problem = REPORT_PROBLEM_CASE_NOT_FOUND;
		st = FLEET_INVALID;
	} else if (strcmp(outcome, "case_closed") == 0) {
		out->problem = REPORT_PROBLEM_CASE_CLOSED;
		st = FLEET_INVALID;
	} else if (strcmp(outcome, "case_other_bike") == 0) {
		out->problem = REPORT_PROBLEM_CASE_OTHER_BIKE;
		st = FLEET_INVALID;
	} else {
		log_error("report: unexpected outcome %s", outcome);
		st = FLEET_INTERNAL;
	}
out:
	PQclear(res);
	return st;
}
