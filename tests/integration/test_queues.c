/* Integration tests of the work queues (list_cases) and of case-id completion, through the real
 * server against the real PostgreSQL, one server per person: each role finds the cases it may act
 * on (a technician the inspections of its regions, a fleet operator the write-offs someone else
 * asked for, customer care a bike's cases), oldest waiting first, a page at a time behind a
 * cursor that serves only its own list; nothing of another region shows, whatever the filter;
 * one audit row per call; completion of {caseId} from the caller's own cases. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* The tests' own bikes: FR-PAR, FR-LYO, and one for a long history (FR-PAR). */
#define WQ_PAR1 "VL-990401"
#define WQ_PAR2 "VL-990402"
#define WQ_PAR3 "VL-990403"
#define WQ_LYO1 "VL-990411"
#define WQ_LONG "VL-990421"
#define WQ_BIKES "'" WQ_PAR1 "', '" WQ_PAR2 "', '" WQ_PAR3 "', '" WQ_LYO1 "', '" WQ_LONG "'"
#define WQ_PAGE 20 /* list_cases.json's page size */

enum { WQ_MARIE, WQ_PAUL, WQ_OLIVIA, WQ_NADIA, WQ_TOM, WQ_LENA, WQ_DEV, WQ_NSRV };
static const char *const wq_who[WQ_NSRV][2] = {
	[WQ_MARIE] = {"marie", "customer-care-assistant"}, /* customer care, FR-PAR */
	[WQ_PAUL] = {"paul", "customer-care-assistant"},   /* customer care, FR-LYO */
	[WQ_OLIVIA] = {"olivia", "ops-assistant"},         /* fleet operator, FR-PAR FR-LYO */
	[WQ_NADIA] = {"nadia", "ops-assistant"},           /* fleet operator, FR-PAR FR-LYO */
	[WQ_TOM] = {"tom", "ops-assistant"},               /* technician, FR-PAR FR-LYO */
	[WQ_LENA] = {"lena", "ops-assistant"},             /* technician, BE-BRU */
	[WQ_DEV] = {"dev", "developer-ide"},               /* viewer, FR-PAR */
};
static struct it_server wq_srv[WQ_NSRV];
static struct it_conn wq_conn[WQ_NSRV];
static int wq_seq;

static void wq_setup(void)
{
	for (int i = 0; i < WQ_NSRV; i++) {
		char se[128], ce[128];
		snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", wq_who[i][0]);
		snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", wq_who[i][1]);
		const char *env[] = {se, ce, NULL};
		ck_assert_int_eq(it_server_start(&wq_srv[i], env), 0);
		it_conn_open(&wq_conn[i], wq_srv[i].port);
	}
}

static void wq_teardown(void)
{
	for (int i = 0; i < WQ_NSRV; i++) {
		it_conn_close(&wq_conn[i]);
		ck_assert_int_eq(it_server_stop(&wq_srv[i]), 0);
	}
}

static void wq_exec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wq_exec(const char *fmt, ...)
{
	char sql[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	free(v);
}

/* The tests' bikes available, without cases, reports, tasks or history. */
static void wq_fresh(void)
{
	wq_exec("DELETE FROM fleet.tasks WHERE case_id IN (SELECT case_id FROM fleet.cases WHERE "
		"bike_id IN (" WQ_BIKES "));"
		"DELETE FROM fleet.idempotency_keys WHERE report_id IN (SELECT report_id FROM "
		"fleet.damage_reports WHERE bike_id IN (" WQ_BIKES "));"
		"DELETE FROM fleet.case_events WHERE case_id IN (SELECT case_id FROM fleet.cases "
		"WHERE bike_id IN (" WQ_BIKES "));"
		"DELETE FROM fleet.bike_status_history WHERE bike_id IN (" WQ_BIKES ");"
		"DELETE FROM fleet.damage_reports WHERE bike_id IN (" WQ_BIKES ");"
		"DELETE FROM fleet.cases WHERE bike_id IN (" WQ_BIKES ");"
		"INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, "
		"last_seen_at) SELECT b, r, s, 'available', 90, now() FROM (VALUES "
		"('" WQ_PAR1 "', 'FR-PAR', 'PAR-003'), ('" WQ_PAR2 "', 'FR-PAR', NULL), "
		"('" WQ_PAR3 "', 'FR-PAR', NULL), ('" WQ_LYO1 "', 'FR-LYO', 'LYO-002'), "
		"('" WQ_LONG "', 'FR-PAR', NULL)) AS v(b, r, s) "
		"ON CONFLICT (bike_id) DO UPDATE SET status = 'available', region = "
		"EXCLUDED.region, station_id = EXCLUDED.station_id");
}

/* tools/call of tool with args (JSON object text) as srv's caller: its result (new reference),
 * after checking that the call left exactly one audit row, with outcome when not NULL. */
static json_t *wq_call(int srv, const char *tool, const char *args, const char *outcome)
{
	char id[64];
	snprintf(id, sizeof id, "wq-%d-%d", (int)getpid(), ++wq_seq);
	struct it_response r;
	it_conn_tool(&wq_conn[srv], NULL, id, tool, args, &r);
	json_t *res = json_incref(json_object_get(r.json, "result"));
	ck_assert_msg(res != NULL, "%s %s as %s: HTTP %ld %s", tool, args, wq_who[srv][0], r.status,
		      r.body);
	it_response_free(&r);
	char *sql = mem_printf("SELECT count(*) || '|' || coalesce(min(outcome), '') FROM "
			       "fleet.audit_log WHERE request_id = '\"%s\"'",
			       id);
	char *got = it_sql(sql);
	ck_assert_msg(got && strncmp(got, "1|", 2) == 0, "%s %s: audit rows %s", tool, args,
		      got ? got : "(query failed)");
	if (outcome)
		ck_assert_msg(strcmp(got + 2, outcome) == 0, "%s %s: audited %s, want %s", tool,
			      args, got + 2, outcome);
	free(got);
	free(sql);
	return res;
}

/* A step that must succeed. */
static void wq_step(int srv, const char *tool, const char *args)
{
	json_t *res = wq_call(srv, tool, args, NULL);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s %s: %s", tool, args,
		      json_string_value(json_object_get(
			      json_array_get(json_object_get(res, "content"), 0), "text")));
	json_decref(res);
}

/* srv's caller reports bike damaged: the case id (new). */
static char *wq_report(int srv, const char *bike)
{
	char args[128];
	snprintf(args, sizeof args, "{\"bikeId\":\"%s\",\"issue\":\"flat_tire\"}", bike);
	json_t *res = wq_call(srv, "report_damaged_bike", args, "ok");
	char *c = mem_strdup(json_string_value(
		json_object_get(json_object_get(res, "structuredContent"), "caseId")));
	json_decref(res);
	return c;
}

/* Every row list_cases answers srv's caller for args (a JSON object's members, without
 * braces), following nextCursor to the end (new array): each page WQ_PAGE rows but the last,
 * oldest waiting first; *pages how many pages it took (NULL: unasked). (Rows of one
 * millisecond are in case-id order too: the long history below shows it exactly.) */
static json_t *wq_list(int srv, const char *args, int *pages)
{
	json_t *all = json_array();
	char *cursor = NULL;
	int n = 0;
	do {
		char *a = mem_printf("{%s%s%s%s%s}", args, *args && cursor ? "," : "",
				     cursor ? "\"cursor\":\"" : "", cursor ? cursor : "",
				     cursor ? "\"" : "");
		json_t *res = wq_call(srv, "list_cases", a, "ok");
		json_t *sc = json_object_get(res, "structuredContent");
		ck_assert_msg(json_is_false(json_object_get(res, "isError")) && sc, "%s: %s", a,
			      json_dumps(res, 0));
		json_t *rows = json_object_get(sc, "cases");
		ck_assert_uint_le(json_array_size(rows), WQ_PAGE);
		json_array_extend(all, rows);
		free(cursor);
		const char *next = json_string_value(json_object_get(sc, "nextCursor"));
		cursor = next ? mem_strdup(next) : NULL;
		ck_assert_msg(!cursor || json_array_size(rows) == WQ_PAGE,
			      "a page of %zu rows before the last", json_array_size(rows));
		json_decref(res);
		free(a);
		n++;
	} while (cursor);
	for (size_t i = 1; i < json_array_size(all); i++)
		ck_assert_msg(strcmp(json_string_value(
					     json_object_get(json_array_get(all, i - 1), "since")),
				     json_string_value(json_object_get(json_array_get(all, i),
								       "since"))) <= 0,
			      "rows %zu and %zu out of order", i - 1, i);
	if (pages)
		*pages = n;
	return all;
}

/* The row of case c in rows (borrowed), or NULL. */
static json_t *wq_row(json_t *rows, const char *c)
{
	size_t i;
	json_t *row;
	json_array_foreach (rows, i, row)
		if (strcmp(json_string_value(json_object_get(row, "caseId")), c) == 0)
			return row;
	return NULL;
}

static const char *wq_str(json_t *row, const char *field)
{
	const char *v = json_string_value(json_object_get(row, field));
	ck_assert_msg(v != NULL, "no %s in the row", field);
	return v;
}

/* Whether c is among srv's rows for args. */
static bool wq_lists(int srv, const char *args, const char *c)
{
	json_t *rows = wq_list(srv, args, NULL);
	bool found = wq_row(rows, c) != NULL;
	json_decref(rows);
	return found;
}

/* olivia asked to write case c off (as close_case written_off leaves it, confirmed). */
static void wq_write_off_asked(const char *c)
{
	wq_exec("UPDATE fleet.cases SET state = 'awaiting_approval', write_off_requested_by = "
		"'olivia', write_off_requested_via = 'ops-assistant', write_off_requested_at = "
		"clock_timestamp(), updated_at = clock_timestamp() WHERE case_id = '%s';"
		"INSERT INTO fleet.case_events (case_id, region, kind, actor_subject, "
		"actor_client, "
		"at, note) SELECT case_id, region, 'write_off_requested', 'olivia', "
		"'ops-assistant', clock_timestamp(), 'frame cracked' FROM fleet.cases WHERE "
		"case_id = '%s'",
		c, c);
}

START_TEST(each_role_finds_the_cases_it_may_act_on)
{
	wq_fresh();
	char *p1 = wq_report(WQ_MARIE, WQ_PAR1);
	char *l1 = wq_report(WQ_PAUL, WQ_LYO1);
	char *p2 = wq_report(WQ_OLIVIA, WQ_PAR2);
	char *args = mem_printf("{\"caseId\":\"%s\",\"note\":\"rear brake\"}", p1);
	wq_step(WQ_MARIE, "request_inspection", args);
	free(args);
	args = mem_printf("{\"caseId\":\"%s\"}", l1);
	wq_step(WQ_PAUL, "request_inspection", args);
	free(args);

	/* tom (technician, FR-PAR and FR-LYO): both inspections, the older first, with what
	 * they wait for, who asked and where the bike is. */
	json_t *rows = wq_list(WQ_TOM, "\"waitingForMe\":true", NULL);
	json_t *a = wq_row(rows, p1), *b = wq_row(rows, l1);
	ck_assert_msg(a && b, "tom's queue lacks %s or %s", p1, l1);
	ck_assert_ptr_null(wq_row(rows, p2)); /* open: not his step */
	size_t i;
	json_t *row;
	json_array_foreach (rows, i, row) {
		ck_assert_str_eq(wq_str(row, "state"), "inspection_requested");
		ck_assert(json_is_true(json_object_get(row, "youMayAct")));
	}
	ck_assert_str_eq(wq_str(a, "waitingFor"), "the inspection, by a technician of Paris");
	ck_assert_str_eq(wq_str(b, "waitingFor"), "the inspection, by a technician of Lyon");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(a, "nextSteps"), 0)),
			 "record_inspection");
	ck_assert_str_eq(wq_str(a, "stepByName"), "Marie Dupont");
	ck_assert_str_eq(wq_str(a, "stepViaName"), "Customer-care assistant");
	ck_assert_str_eq(wq_str(a, "stepNote"), "rear brake");
	ck_assert_str_eq(wq_str(a, "stationName"), "Paris station 3");
	ck_assert_str_eq(wq_str(a, "regionName"), "Paris");
	ck_assert_str_eq(wq_str(a, "lastIssue"), "flat_tire");
	ck_assert_int_lt(strcmp(wq_str(a, "since"), wq_str(b, "since")), 0);
	json_decref(rows);
	/* lena (technician, BE-BRU) sees neither. */
	ck_assert(!wq_lists(WQ_LENA, "", p1) && !wq_lists(WQ_LENA, "", l1));

	/* A report joining the case leaves it waiting since its step; a step moves it. */
	rows = wq_list(WQ_TOM, "\"bikeId\":\"" WQ_PAR1 "\"", NULL);
	char *since = mem_strdup(wq_str(json_array_get(rows, 0), "since"));
	json_decref(rows);
	free(wq_report(WQ_MARIE, WQ_PAR1));
	rows = wq_list(WQ_TOM, "\"bikeId\":\"" WQ_PAR1 "\"", NULL);
	ck_assert_str_eq(wq_str(json_array_get(rows, 0), "since"), since);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_array_get(rows, 0), "reportCount")), 2);
	json_decref(rows);
	args = mem_printf("{\"caseId\":\"%s\",\"finding\":\"beyond_repair\"}", p1);
	wq_step(WQ_TOM, "record_inspection", args);
	free(args);
	ck_assert(!wq_lists(WQ_TOM, "\"waitingForMe\":true", p1));
	rows = wq_list(WQ_OLIVIA, "\"step\":\"inspected\",\"waitingForMe\":true", NULL);
	a = wq_row(rows, p1);
	ck_assert_msg(a != NULL, "olivia's queue of cases to close lacks %s", p1);
	ck_assert_int_gt(strcmp(wq_str(a, "since"), since), 0);
	ck_assert_str_eq(wq_str(a, "finding"), "beyond_repair");
	ck_assert_str_eq(wq_str(a, "stepByName"), "Tom Garnier");
	json_decref(rows);
	free(since);

	/* olivia asks for the write-off: the second-operator rule keeps it out of her queue of
	 * decisions, and puts it in nadia's, with the asker by name. */
	wq_write_off_asked(p1);
	ck_assert(!wq_lists(WQ_OLIVIA, "\"step\":\"awaiting_approval\",\"waitingForMe\":true", p1));
	rows = wq_list(WQ_OLIVIA, "\"step\":\"awaiting_approval\"", NULL);
	a = wq_row(rows, p1);
	ck_assert_msg(a != NULL, "olivia does not see the write-off she asked for");
	ck_assert(json_is_false(json_object_get(a, "youMayAct")));
	json_decref(rows);
	rows = wq_list(WQ_NADIA, "\"step\":\"awaiting_approval\",\"waitingForMe\":true", NULL);
	a = wq_row(rows, p1);
	ck_assert_msg(a != NULL, "nadia's queue lacks the write-off of %s", p1);
	ck_assert(json_is_true(json_object_get(a, "youMayAct")));
	ck_assert_str_eq(wq_str(a, "writeOffRequestedByName"), "Olivia Leroy");
	ck_assert_str_eq(wq_str(a, "waitingFor"),
			 "a decision on the write-off, by a fleet operator of Paris other than "
			 "Olivia Leroy");
	ck_assert_str_eq(wq_str(a, "stepNote"), "frame cracked");
	json_decref(rows);

	/* marie (customer care): her cases only; what waits for her is her open case. */
	char *p3 = wq_report(WQ_MARIE, WQ_PAR3);
	rows = wq_list(WQ_MARIE, "\"waitingForMe\":true", NULL);
	ck_assert_msg(wq_row(rows, p3) != NULL, "marie's queue lacks her open case");
	ck_assert_ptr_null(wq_row(rows, p1)); /* awaiting approval: not hers to decide */
	ck_assert_ptr_null(wq_row(rows, p2)); /* olivia's case: not visible to her */
	json_array_foreach (rows, i, row) {
		ck_assert_str_eq(wq_str(row, "state"), "open");
	}
	json_decref(rows);
	ck_assert(!wq_lists(WQ_MARIE, "", p2));
	/* dev (viewer): no case of its own, nothing to act on. */
	ck_assert(!wq_lists(WQ_DEV, "", p1) && !wq_lists(WQ_DEV, "", p3));
	free(p3);
	free(p2);
	free(l1);
	free(p1);
}
END_TEST

START_TEST(nothing_of_another_region_shows_whatever_the_filter)
{
	wq_fresh();
	char *l1 = wq_report(WQ_PAUL, WQ_LYO1);
	char *p1 = wq_report(WQ_MARIE, WQ_PAR1);
	/* paul's FR-LYO case, named every way marie can: nothing, exactly as for a bike that
	 * does not exist or a region with no case at all. */
	static const char *const probes[] = {
		"{\"bikeId\":\"" WQ_LYO1 "\",\"includeClosed\":true}",
		"{\"bikeId\":\"VL-999999\",\"includeClosed\":true}",
		"{\"region\":\"FR-LYO\"}",
		"{\"region\":\"FR-LYO\",\"step\":\"open\"}",
		"{\"region\":\"ZZ-NON\"}",
	};
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		json_t *res = wq_call(WQ_MARIE, "list_cases", probes[i], "ok");
		json_t *want = json_pack("{s:[]}", "cases");
		ck_assert_msg(json_equal(json_object_get(res, "structuredContent"), want), "%s: %s",
			      probes[i], json_dumps(res, 0));
		json_decref(want);
		json_decref(res);
	}
	/* The same filters show paul his own, and tom both regions. */
	ck_assert(wq_lists(WQ_PAUL, "\"bikeId\":\"" WQ_LYO1 "\"", l1));
	ck_assert(wq_lists(WQ_TOM, "\"region\":\"FR-LYO\",\"step\":\"open\"", l1));
	ck_assert(!wq_lists(WQ_TOM, "\"region\":\"FR-LYO\"", p1));
	free(p1);
	free(l1);
}
END_TEST

/* WQ_LONG's history: 44 closed cases and one open, opened a minute apart, oldest first, three
 * of them (the 20th to the 22nd) at the same instant: the order is then by case id. */
static void wq_long_history(void)
{
	wq_fresh();
	wq_exec("INSERT INTO fleet.cases (case_id, bike_id, region, state, opened_at, opened_by, "
		"opened_via, closed_at, resolution) SELECT 'IC-99042' || lpad(n::text, 3, '0'), "
		"'" WQ_LONG "', 'FR-PAR', CASE WHEN n = 45 THEN 'open' ELSE 'closed' END, "
		"timestamptz '2026-03-01 08:00:00+00' + make_interval(mins => CASE WHEN n BETWEEN "
		"20 AND 22 THEN 20 ELSE n END), 'marie', 'customer-care-assistant', CASE WHEN n < "
		"45 THEN timestamptz '2026-03-01 08:00:00+00' + make_interval(mins => CASE WHEN n "
		"BETWEEN 20 AND 22 THEN 20 ELSE n END) END, CASE WHEN n < 45 THEN 'repaired' END "
		"FROM generate_series(1, 45) AS n");
}

START_TEST(a_bikes_history_comes_oldest_first_a_page_at_a_time)
{
	wq_long_history();
	int pages = 0;
	json_t *rows =
		wq_list(WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true", &pages);
	ck_assert_uint_eq(json_array_size(rows), 45);
	ck_assert_int_eq(pages, 3);
	for (size_t i = 0; i < 45; i++) {
		char want[16];
		snprintf(want, sizeof want, "IC-99042%03zu", i + 1);
		ck_assert_str_eq(wq_str(json_array_get(rows, i), "caseId"), want);
	}
	ck_assert_str_eq(wq_str(json_array_get(rows, 44), "state"), "open");
	/* A closed case waits for nothing, and nobody may act on it. */
	ck_assert(json_is_null(json_object_get(json_array_get(rows, 0), "waitingFor")));
	ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(rows, 0), "nextSteps")),
			  0);
	json_decref(rows);
	/* Without includeClosed, only the active one; a step of closed ones alone. */
	rows = wq_list(WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\"", NULL);
	ck_assert_uint_eq(json_array_size(rows), 1);
	json_decref(rows);
	rows = wq_list(WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\",\"step\":\"closed\"", &pages);
	ck_assert_uint_eq(json_array_size(rows), 44);
	ck_assert_int_eq(pages, 3);
	json_decref(rows);

	/* A page starts after the last row shown, not at an offset: cases that join before it
	 * while the list is read move nothing into or out of the next page. */
	json_t *first = wq_call(WQ_MARIE, "list_cases",
				"{\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true}", "ok");
	const char *cursor = json_string_value(
		json_object_get(json_object_get(first, "structuredContent"), "nextCursor"));
	ck_assert_ptr_nonnull(cursor);
	wq_exec("INSERT INTO fleet.cases (case_id, bike_id, region, state, opened_at, opened_by, "
		"opened_via, closed_at, resolution) SELECT 'IC-99042' || n, '" WQ_LONG "', "
		"'FR-PAR', 'closed', timestamptz '2026-02-01 08:00:00+00', 'marie', "
		"'customer-care-assistant', timestamptz '2026-02-01 08:00:00+00', 'repaired' "
		"FROM generate_series(901, 905) AS n");
	char *args = mem_printf(
		"{\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true,\"cursor\":\"%s\"}", cursor);
	json_t *second = wq_call(WQ_MARIE, "list_cases", args, "ok");
	json_t *page = json_object_get(json_object_get(second, "structuredContent"), "cases");
	ck_assert_uint_eq(json_array_size(page), WQ_PAGE);
	ck_assert_str_eq(wq_str(json_array_get(page, 0), "caseId"), "IC-99042021");
	free(args);
	json_decref(second);
	json_decref(first);
}
END_TEST

START_TEST(a_cursor_serves_only_its_own_list)
{
	wq_long_history();
	json_t *first = wq_call(WQ_MARIE, "list_cases",
				"{\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true}", "ok");
	char *cursor = mem_strdup(json_string_value(
		json_object_get(json_object_get(first, "structuredContent"), "nextCursor")));
	json_decref(first);
	char *tampered = mem_strdup(cursor);
	tampered[strlen(tampered) / 2] = tampered[strlen(tampered) / 2] == 'A' ? 'B' : 'A';
	struct {
		int srv;
		const char *filters;
		const char *cursor;
	} bad[] = {
		{WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\"", cursor}, /* other filters */
		{WQ_MARIE, "\"includeClosed\":true", cursor},     /* other filters */
		{WQ_OLIVIA, "\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true",
		 cursor}, /* caller */
		{WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true", tampered},
		{WQ_MARIE, "\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true", "bk1.000000140c8e"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *args = mem_printf("{%s,\"cursor\":\"%s\"}", bad[i].filters, bad[i].cursor);
		json_t *res = wq_call(bad[i].srv, "list_cases", args, "invalid");
		const char *text = json_string_value(json_object_get(
			json_array_get(json_object_get(res, "content"), 0), "text"));
		ck_assert_msg(json_is_true(json_object_get(res, "isError")) && text &&
				      strstr(text, "List again without it"),
			      "%s: %s", args, json_dumps(res, 0));
		ck_assert_ptr_null(json_object_get(res, "structuredContent"));
		json_decref(res);
		free(args);
	}
	/* The good one still serves. */
	char *args = mem_printf(
		"{\"bikeId\":\"" WQ_LONG "\",\"includeClosed\":true,\"cursor\":\"%s\"}", cursor);
	json_t *res = wq_call(WQ_MARIE, "list_cases", args, "ok");
	ck_assert(json_is_false(json_object_get(res, "isError")));
	json_decref(res);
	free(args);
	free(tampered);
	free(cursor);
}
END_TEST

/* completion/complete of {caseId} as srv's caller: the values (new), *total set. */
static json_t *wq_complete(int srv, const char *prefix, long *total)
{
	char params[256];
	snprintf(params, sizeof params,
		 "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"bikaroo://cases/{caseId}\"},"
		 "\"argument\":{\"name\":\"caseId\",\"value\":\"%s\"}",
		 prefix);
	struct it_response r;
	it_mcp(wq_srv[srv].port, "completion/complete", NULL, params, &r);
	json_t *c = json_object_get(json_object_get(r.json, "result"), "completion");
	ck_assert_msg(c != NULL, "%s", r.body);
	json_t *values = json_incref(json_object_get(c, "values"));
	*total = (long)json_integer_value(json_object_get(c, "total"));
	it_response_free(&r);
	return values;
}

static bool wq_has(json_t *values, const char *v)
{
	size_t i;
	json_t *x;
	json_array_foreach (values, i, x)
		if (strcmp(json_string_value(x), v) == 0)
			return true;
	return false;
}

START_TEST(case_ids_complete_from_the_callers_own_cases)
{
	wq_long_history();
	char *l1 = wq_report(WQ_PAUL, WQ_LYO1);
	long total;
	/* marie's 45 cases of the long history: the open one first, then the closed in id order;
	 * typed with IC-, in lower case, or as digits alone. */
	static const char *const prefixes[] = {"IC-99042", "ic-99042", "99042"};
	for (size_t i = 0; i < 3; i++) {
		json_t *v = wq_complete(WQ_MARIE, prefixes[i], &total);
		ck_assert_int_eq(total, 45);
		ck_assert_uint_eq(json_array_size(v), 45);
		ck_assert_str_eq(json_string_value(json_array_get(v, 0)), "IC-99042045");
		ck_assert_str_eq(json_string_value(json_array_get(v, 1)), "IC-99042001");
		json_decref(v);
	}
	/* Another region's case and another agent's are not hers to complete. */
	char digits[32];
	snprintf(digits, sizeof digits, "%s", l1 + 3);
	json_t *v = wq_complete(WQ_MARIE, l1, &total);
	ck_assert(!wq_has(v, l1));
	json_decref(v);
	v = wq_complete(WQ_PAUL, "IC-99042", &total);
	ck_assert_int_eq(total, 0);
	json_decref(v);
	/* Technicians complete every case of their regions; paul his own. */
	v = wq_complete(WQ_TOM, digits, &total);
	ck_assert(wq_has(v, l1));
	json_decref(v);
	v = wq_complete(WQ_PAUL, digits, &total);
	ck_assert(wq_has(v, l1));
	json_decref(v);
	v = wq_complete(WQ_LENA, digits, &total);
	ck_assert(!wq_has(v, l1));
	json_decref(v);
	free(l1);
}
END_TEST

CHECK_SUITE(queues)
{
	Suite *s = suite_create("queues");
	TCase *tc = tcase_create("queues");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, wq_setup, wq_teardown);
	tcase_add_test(tc, each_role_finds_the_cases_it_may_act_on);
	tcase_add_test(tc, nothing_of_another_region_shows_whatever_the_filter);
	tcase_add_test(tc, a_bikes_history_comes_oldest_first_a_page_at_a_time);
	tcase_add_test(tc, a_cursor_serves_only_its_own_list);
	tcase_add_test(tc, case_ids_complete_from_the_callers_own_cases);
	suite_add_tcase(s, tc);
	return s;
}
