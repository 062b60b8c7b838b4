/* Integration tests of an investigation case as the people who work it read it, through the
 * real server against the real PostgreSQL, one server per person: bikaroo://cases/{caseId}
 * says what comes next and whether the caller may take it (nextSteps, youMayAct), names the
 * application through which a write-off was asked, and gives each step the bike's status change
 * it made (back in service, retired); and the questions a user confirms on the server's side name
 * the bike, the case, its region and what follows, never a tool, a client id or an identity. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* Bikes of these tests' own (FR-PAR), made available again, without cases, before each test. */
#define CW_BIKES "'VL-990301', 'VL-990302', 'VL-990303'"
#define CW_CAPS_ELICIT "{\"elicitation\":{\"form\":{}}}"

enum {
	CW_MARIE,
	CW_MARIE_IDE,
	CW_MARIE_CAREFUL,
	CW_OLIVIA,
	CW_OLIVIA_CAREFUL,
	CW_NADIA,
	CW_TOM,
	CW_NSRV
};
static const char *const cw_who[CW_NSRV][2] = {
	[CW_MARIE] = {"marie", "customer-care-assistant"},
	[CW_MARIE_IDE] = {"marie", "developer-ide"},
	[CW_MARIE_CAREFUL] = {"marie", "careful-assistant"},
	[CW_OLIVIA] = {"olivia", "ops-assistant"},
	[CW_OLIVIA_CAREFUL] = {"olivia", "careful-assistant"},
	[CW_NADIA] = {"nadia", "ops-assistant"},
	[CW_TOM] = {"tom", "ops-assistant"},
};
static struct it_server cw_srv[CW_NSRV];

static void cw_setup(void)
{
	for (int i = 0; i < CW_NSRV; i++) {
		char se[128], ce[128];
		snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", cw_who[i][0]);
		snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", cw_who[i][1]);
		const char *env[] = {se, ce, NULL};
		ck_assert_int_eq(it_server_start(&cw_srv[i], env), 0);
	}
}

static void cw_teardown(void)
{
	for (int i = 0; i < CW_NSRV; i++)
		ck_assert_int_eq(it_server_stop(&cw_srv[i]), 0);
}

static void cw_fresh(void)
{
	char *done = it_sql(
		"DELETE FROM fleet.tasks WHERE case_id IN (SELECT case_id FROM fleet.cases "
		"WHERE bike_id IN (" CW_BIKES "));"
		"DELETE FROM fleet.case_events WHERE case_id IN (SELECT case_id FROM "
		"fleet.cases WHERE bike_id IN (" CW_BIKES "));"
		"DELETE FROM fleet.idempotency_keys WHERE report_id IN (SELECT report_id FROM "
		"fleet.damage_reports WHERE bike_id IN (" CW_BIKES "));"
		"DELETE FROM fleet.bike_status_history WHERE bike_id IN (" CW_BIKES ");"
		"DELETE FROM fleet.damage_reports WHERE bike_id IN (" CW_BIKES ");"
		"DELETE FROM fleet.cases WHERE bike_id IN (" CW_BIKES ");"
		"INSERT INTO fleet.bikes (bike_id, region, status, battery_pct, last_seen_at) "
		"SELECT b, 'FR-PAR', 'available', 90, now() FROM unnest(ARRAY[" CW_BIKES "]) b "
		"ON CONFLICT (bike_id) DO UPDATE SET status = 'available'");
	ck_assert_msg(done != NULL, "the tests' bikes could not be made fresh");
	free(done);
}

/* tools/call of tool with args (a JSON object's text) on srv's server, with the client
 * capabilities caps and extra params members ("" or "\"requestState\":...,"): its result
 * (borrowed from r). */
static json_t *cw_call(int srv, const char *tool, const char *args, const char *caps,
		       const char *extra, struct it_response *r)
{
	char *params = mem_printf("\"name\":\"%s\",%s\"arguments\":%s", tool, extra, args);
	it_mcp_caps(cw_srv[srv].port, "tools/call", tool, params, caps, r);
	free(params);
	json_t *res = json_object_get(r->json, "result");
	ck_assert_msg(res != NULL, "%s %s: %s", tool, args, r->body);
	return res;
}

/* A step that goes through (confirmed on the server's side when it asks); its result's
 * structuredContent field (new). */
static char *cw_step(int srv, const char *tool, const char *args, const char *field)
{
	struct it_response r;
	json_t *res = cw_call(srv, tool, args, CW_CAPS_ELICIT, "", &r);
	if (json_is_string(json_object_get(res, "requestState"))) {
		char *extra = mem_printf(
			"\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":{\"action\":"
			"\"accept\",\"content\":{\"confirm\":true}}},",
			json_string_value(json_object_get(res, "requestState")));
		it_response_free(&r);
		res = cw_call(srv, tool, args, CW_CAPS_ELICIT, extra, &r);
		free(extra);
	}
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s %s: %s", tool, args,
		      r.body);
	char *v = mem_strdup(json_string_value(
		json_object_get(json_object_get(res, "structuredContent"), field)));
	it_response_free(&r);
	return v;
}

/* The question srv's caller is asked before tool with args (new), and the title of the box
 * they tick (into title); nothing is done. */
static char *cw_question(int srv, const char *tool, const char *args, char *title, size_t cap)
{
	struct it_response r;
	json_t *res = cw_call(srv, tool, args, CW_CAPS_ELICIT, "", &r);
	json_t *params = json_object_get(
		json_object_get(json_object_get(res, "inputRequests"), "confirm"), "params");
	ck_assert_msg(json_is_string(json_object_get(params, "message")), "%s: %s", tool, r.body);
	snprintf(title, cap, "%s",
		 json_string_value(json_object_get(
			 json_object_get(json_object_get(json_object_get(params, "requestedSchema"),
							 "properties"),
					 "confirm"),
			 "title")));
	char *q = mem_strdup(json_string_value(json_object_get(params, "message")));
	it_response_free(&r);
	return q;
}

/* The case as srv's caller reads it (new; fails when it cannot be read). */
static json_t *cw_case(int srv, const char *case_id)
{
	char uri[96], params[128];
	snprintf(uri, sizeof uri, "bikaroo://cases/%s", case_id);
	snprintf(params, sizeof params, "\"uri\":\"%s\"", uri);
	struct it_response r;
	it_mcp(cw_srv[srv].port, "resources/read", uri, params, &r);
	json_t *c =
		json_array_get(json_object_get(json_object_get(r.json, "result"), "contents"), 0);
	json_t *doc = json_loads(json_string_value(json_object_get(c, "text")), 0, NULL);
	ck_assert_msg(doc != NULL, "%s: %s", case_id, r.body);
	it_response_free(&r);
	return doc;
}

/* Asserts what comes next on the case as srv's caller reads it: the tools that take the next
 * step, as a comma list ("" for none), and whether the caller may take it. */
static void cw_next(int srv, const char *case_id, const char *want, bool may)
{
	json_t *doc = cw_case(srv, case_id);
	char got[256] = "";
	size_t i;
	json_t *s;
	json_t *steps = json_object_get(doc, "nextSteps");
	ck_assert_msg(json_is_array(steps), "%s: no nextSteps", case_id);
	json_array_foreach (steps, i, s) {
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "",
			 json_string_value(s));
	}
	json_t *you = json_object_get(doc, "youMayAct");
	ck_assert_msg(strcmp(got, want) == 0 && json_is_boolean(you) && json_is_true(you) == may,
		      "%s/%s on %s: next [%s], youMayAct %s; want [%s], %s", cw_who[srv][0],
		      cw_who[srv][1], case_id, got,
		      json_is_boolean(you) ? (json_is_true(you) ? "true" : "false") : "absent",
		      want, may ? "true" : "false");
	json_decref(doc);
}

/* {"caseId": c, <more>} as JSON text (static buffer: one at a time). */
static const char *cw_args(const char *c, const char *more)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "{\"caseId\":\"%s\"%s%s}", c, *more ? "," : "", more);
	return buf;
}

static char *cw_report(const char *bike)
{
	char args[128];
	snprintf(args, sizeof args, "{\"bikeId\":\"%s\",\"issue\":\"frame_damage\"}", bike);
	return cw_step(CW_MARIE, "report_damaged_bike", args, "caseId");
}

START_TEST(each_caller_is_told_what_comes_next_and_whether_they_may_take_it)
{
	cw_fresh();
	char *c = cw_report("VL-990301");
	/* open: customer care who opened it and any fleet operator ask for the inspection; not a
	 * technician, and not through an application that may not report. */
	cw_next(CW_MARIE, c, "request_inspection", true);
	cw_next(CW_OLIVIA, c, "request_inspection", true);
	cw_next(CW_TOM, c, "request_inspection", false);
	cw_next(CW_MARIE_IDE, c, "request_inspection", false);
	free(cw_step(CW_MARIE, "request_inspection", cw_args(c, ""), "state"));
	cw_next(CW_TOM, c, "record_inspection", true);
	cw_next(CW_MARIE, c, "record_inspection", false);
	cw_next(CW_OLIVIA, c, "record_inspection", false);
	free(cw_step(CW_TOM, "record_inspection", cw_args(c, "\"finding\":\"beyond_repair\""),
		     "state"));
	cw_next(CW_OLIVIA, c, "close_case", true);
	cw_next(CW_NADIA, c, "close_case", true);
	cw_next(CW_TOM, c, "close_case", false);
	cw_next(CW_MARIE, c, "close_case", false);
	free(cw_step(CW_OLIVIA, "close_case",
		     cw_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
		     "state"));
	/* The operator who asked for the write-off may not decide it; another may. */
	cw_next(CW_OLIVIA, c, "decide_write_off", false);
	cw_next(CW_NADIA, c, "decide_write_off", true);
	free(cw_step(CW_NADIA, "decide_write_off", cw_args(c, "\"decision\":\"approve\""),
		     "state"));
	for (int i = 0; i < CW_NSRV; i++)
		if (i != CW_MARIE_CAREFUL && i != CW_OLIVIA_CAREFUL)
			cw_next(i, c, "", false);
	free(c);
}
END_TEST

/* The event of type in the case's events (borrowed), the last one of that type. */
static json_t *cw_event(json_t *doc, const char *type)
{
	json_t *found = NULL, *e;
	size_t i;
	json_t *events = json_object_get(doc, "events");
	json_array_foreach (events, i, e)
		if (strcmp(json_string_value(json_object_get(e, "type")), type) == 0)
			found = e;
	ck_assert_msg(found != NULL, "no %s event", type);
	return found;
}

static void cw_status_change(json_t *doc, const char *type, const char *before, const char *after)
{
	json_t *e = cw_event(doc, type);
	const char *b = json_string_value(json_object_get(e, "statusBefore"));
	const char *a = json_string_value(json_object_get(e, "statusAfter"));
	ck_assert_msg(b && a && strcmp(b, before) == 0 && strcmp(a, after) == 0,
		      "%s: %s -> %s, want %s -> %s", type, b ? b : "null", a ? a : "null", before,
		      after);
}

START_TEST(the_case_names_everyone_and_shows_the_bike_back_in_service_or_retired)
{
	cw_fresh();
	/* Closed as repaired: the bike is back in service, on the closing step itself. */
	char *c = cw_report("VL-990302");
	free(cw_step(CW_OLIVIA, "request_inspection", cw_args(c, ""), "state"));
	free(cw_step(CW_TOM, "record_inspection", cw_args(c, "\"finding\":\"repairable\""),
		     "state"));
	free(cw_step(CW_OLIVIA, "close_case", cw_args(c, "\"resolution\":\"repaired\""), "state"));
	json_t *doc = cw_case(CW_MARIE, c);
	cw_status_change(doc, "report_added", "available", "unavailable");
	cw_status_change(doc, "closed", "unavailable", "available");
	ck_assert(json_is_null(json_object_get(cw_event(doc, "inspected"), "statusAfter")));
	json_decref(doc);
	free(c);
	/* Written off: asked through an application named as the case names it, then approved:
	 * the bike retired. */
	c = cw_report("VL-990303");
	free(cw_step(CW_OLIVIA, "request_inspection", cw_args(c, ""), "state"));
	free(cw_step(CW_TOM, "record_inspection", cw_args(c, "\"finding\":\"beyond_repair\""),
		     "state"));
	free(cw_step(CW_OLIVIA, "close_case",
		     cw_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
		     "state"));
	char *app = it_sql("SELECT name FROM fleet.client_apps WHERE client_id = 'ops-assistant'");
	doc = cw_case(CW_NADIA, c);
	const char *via = json_string_value(json_object_get(doc, "writeOffRequestedViaName"));
	ck_assert_msg(via && strcmp(via, app) == 0, "writeOffRequestedViaName: %s",
		      via ? via : "absent");
	ck_assert(
		json_is_null(json_object_get(cw_event(doc, "write_off_requested"), "statusAfter")));
	json_decref(doc);
	free(cw_step(CW_NADIA, "decide_write_off", cw_args(c, "\"decision\":\"approve\""),
		     "state"));
	doc = cw_case(CW_MARIE, c);
	cw_status_change(doc, "write_off_approved", "unavailable", "retired");
	json_decref(doc);
	free(app);
	free(c);
}
END_TEST

/* Asserts that question q speaks the user's words: it holds each of words (NULL-terminated),
 * and no tool, identity, client id, code or "act as". */
static void cw_plain(const char *q, const char *const *words)
{
	static const char *const never[] = {"request_inspection",
					    "record_inspection",
					    "close_case",
					    "decide_write_off",
					    "report_damaged_bike",
					    "olivia",
					    "marie",
					    "nadia",
					    "ops-assistant",
					    "careful-assistant",
					    "FR-PAR",
					    "act as",
					    "_",
					    "Confirm ",
					    NULL};
	for (int i = 0; never[i]; i++)
		ck_assert_msg(!strstr(q, never[i]), "the question says \"%s\": %s", never[i], q);
	for (int i = 0; words[i]; i++)
		ck_assert_msg(strstr(q, words[i]) != NULL, "the question does not say \"%s\": %s",
			      words[i], q);
}

START_TEST(questions_name_the_bike_the_case_the_step_and_what_follows)
{
	cw_fresh();
	char title[256];
	char *q = cw_question(CW_MARIE_CAREFUL, "report_damaged_bike",
			      "{\"bikeId\":\"VL-990301\",\"issue\":\"brake_failure\"}", title,
			      sizeof title);
	cw_plain(q, (const char *const[]){"VL-990301", "(Paris)", "brake failure",
					  "becomes unavailable", "new investigation case", NULL});
	free(q);
	char *c = cw_report("VL-990301");
	q = cw_question(CW_MARIE_CAREFUL, "request_inspection", cw_args(c, ""), title,
			sizeof title);
	cw_plain(q, (const char *const[]){"inspect bike VL-990301", c, "Paris",
					  "waits for a technician", NULL});
	free(q);
	free(cw_step(CW_MARIE, "request_inspection", cw_args(c, ""), "state"));
	free(cw_step(CW_TOM, "record_inspection", cw_args(c, "\"finding\":\"repairable\""),
		     "state"));
	q = cw_question(CW_OLIVIA_CAREFUL, "close_case", cw_args(c, "\"resolution\":\"repaired\""),
			title, sizeof title);
	cw_plain(q, (const char *const[]){"Close case", c, "VL-990301", "Paris", "as repaired",
					  "back in service", NULL});
	free(q);
	/* A write-off is asked, not done: the question and its box say it waits for a second
	 * operator. */
	q = cw_question(CW_OLIVIA, "close_case",
			cw_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
			title, sizeof title);
	cw_plain(q, (const char *const[]){"written off", c, "VL-990301", "Paris",
					  "second fleet operator", "stays unavailable", NULL});
	ck_assert_msg(!strstr(title, "Close"), "the box says \"%s\"", title);
	free(q);
	free(cw_step(CW_OLIVIA, "close_case",
		     cw_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
		     "state"));
	char *olivia = it_sql("SELECT display_name FROM fleet.principals WHERE subject = 'olivia'");
	q = cw_question(CW_NADIA, "decide_write_off", cw_args(c, "\"decision\":\"approve\""), title,
			sizeof title);
	cw_plain(q, (const char *const[]){"Approve the write-off", c, "VL-990301", "Paris", olivia,
					  "retired for good", NULL});
	free(q);
	q = cw_question(CW_NADIA, "decide_write_off", cw_args(c, "\"decision\":\"refuse\""), title,
			sizeof title);
	cw_plain(q, (const char *const[]){"Refuse the write-off", c, "VL-990301", olivia,
					  "back to inspected", NULL});
	free(q);
	free(olivia);
	free(c);
}
END_TEST

CHECK_SUITE(casework)
{
	Suite *s = suite_create("casework");
	TCase *tc = tcase_create("casework");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, cw_setup, cw_teardown);
	tcase_add_test(tc, each_caller_is_told_what_comes_next_and_whether_they_may_take_it);
	tcase_add_test(tc, the_case_names_everyone_and_shows_the_bike_back_in_service_or_retired);
	tcase_add_test(tc, questions_name_the_bike_the_case_the_step_and_what_follows);
	suite_add_tcase(s, tc);
	return s;
}
