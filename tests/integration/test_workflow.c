/* Integration tests of the investigation case as a workflow, through the real server against the
 * real PostgreSQL, one server per person (as on several instances): report -> request_inspection
 * -> record_inspection -> close_case with the bike back in service; a write-off asked by one
 * fleet operator, refused to her, approved by another, the bike retired; each step from a wrong
 * state refused in its own words; the tools each role lists; one audit row per call; and the
 * Tasks extension over the workflow: a task bound to its subject and client application,
 * completed by a technician's step, cancelled by its requester, expired and purged. */
#include <check.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* Bikes of these tests' own (FR-PAR), made available again before each test. */
#define WF_BIKES                                                                                   \
	"'VL-990201', 'VL-990202', 'VL-990203', 'VL-990204', 'VL-990205', 'VL-990206', "           \
	"'VL-990207', 'VL-990208'"
#define WF_CAPS_NONE "{}"
#define WF_CAPS_TASKS "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"

/* One server per caller: marie (customer care) through two client applications, olivia and
 * nadia (fleet operators), tom (technician), dev (viewer); and marie again on a server whose
 * read budget is small (3 at once, then 1 a minute), with its metrics. */
enum { WF_MARIE, WF_MARIE_OPS, WF_OLIVIA, WF_NADIA, WF_TOM, WF_DEV, WF_MARIE_BUDGET, WF_NSRV };
static const char *const wf_who[WF_NSRV][2] = {
	[WF_MARIE] = {"marie", "customer-care-assistant"},
	[WF_MARIE_OPS] = {"marie", "ops-assistant"},
	[WF_OLIVIA] = {"olivia", "ops-assistant"},
	[WF_NADIA] = {"nadia", "ops-assistant"},
	[WF_TOM] = {"tom", "ops-assistant"},
	[WF_DEV] = {"dev", "developer-ide"},
	[WF_MARIE_BUDGET] = {"marie", "customer-care-assistant"},
};
static const char *const wf_extra[WF_NSRV][4] = {
	[WF_MARIE_BUDGET] = {"BIKAROO_RATE_READS=1", "BIKAROO_RATE_READ_BURST=3",
			     "BIKAROO_METRICS_LISTEN=127.0.0.1:0", NULL},
};
static struct it_server wf_srv[WF_NSRV];
static int wf_seq; /* the calls' JSON-RPC ids */

static void wf_setup(void)
{
	for (int i = 0; i < WF_NSRV; i++) {
		char se[128], ce[128];
		snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", wf_who[i][0]);
		snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", wf_who[i][1]);
		const char *env[6] = {se, ce, NULL};
		for (int k = 0; wf_extra[i][k]; k++)
			env[2 + k] = wf_extra[i][k];
		ck_assert_int_eq(it_server_start(&wf_srv[i], env), 0);
	}
}

static void wf_teardown(void)
{
	for (int i = 0; i < WF_NSRV; i++)
		ck_assert_int_eq(it_server_stop(&wf_srv[i]), 0);
}

/* The superuser's first value of the query (new string); fails the test when refused. */
static char *wf_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *wf_sql(const char *fmt, ...)
{
	char sql[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	return v;
}

/* Asserts the query's first value. */
static void wf_expect(const char *want, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wf_expect(const char *want, const char *fmt, ...)
{
	char sql[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	char *v = it_sql(sql);
	ck_assert_msg(v && strcmp(v, want) == 0, "%s: got %s, want %s", sql, v ? v : "(refused)",
		      want);
	free(v);
}

/* The tests' bikes available, without cases, reports or tasks. */
static void wf_fresh(void)
{
	free(wf_sql(
		"DELETE FROM fleet.tasks WHERE case_id IN (SELECT case_id FROM fleet.cases WHERE "
		"bike_id IN (" WF_BIKES "));"
		"DELETE FROM fleet.idempotency_keys WHERE report_id IN (SELECT report_id FROM "
		"fleet.damage_reports WHERE bike_id IN (" WF_BIKES "));"
		"DELETE FROM fleet.case_events WHERE case_id IN (SELECT case_id FROM fleet.cases "
		"WHERE bike_id IN (" WF_BIKES "));"
		"DELETE FROM fleet.bike_status_history WHERE bike_id IN (" WF_BIKES ");"
		"DELETE FROM fleet.damage_reports WHERE bike_id IN (" WF_BIKES ");"
		"DELETE FROM fleet.cases WHERE bike_id IN (" WF_BIKES ");"
		"INSERT INTO fleet.bikes (bike_id, region, status, battery_pct, last_seen_at) "
		"SELECT b, 'FR-PAR', 'available', 90, now() FROM unnest(ARRAY[" WF_BIKES "]) b "
		"ON CONFLICT (bike_id) DO UPDATE SET status = 'available'"));
}

/* A 2026-07-28 request on srv's server: its JSON-RPC id is "wf-<pid>-<n>", written to id. */
static void wf_rpc(int srv, const char *method, const char *name, const char *params,
		   const char *caps, char id[64], struct it_response *r)
{
	snprintf(id, 64, "wf-%d-%d", (int)getpid(), ++wf_seq);
	char mh[64], nh[256];
	snprintf(mh, sizeof mh, "Mcp-Method: %s", method);
	snprintf(nh, sizeof nh, "Mcp-Name: %s", name);
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 mh,
				 nh,
				 NULL};
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
		id, method, params, *params ? "," : "", caps);
	it_http(wf_srv[srv].port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
	ck_assert_msg(r->json != NULL, "%s: HTTP %ld %s", method, r->status, r->body);
}

/* tools/call of tool with args (JSON object text) on srv's server: its result (borrowed from
 * r), after checking that the call left exactly one audit row (it_tool). */
static json_t *wf_tool(int srv, const char *tool, const char *args, struct it_response *r)
{
	return it_tool(wf_srv[srv].port, tool, args, NULL, NULL, r);
}

static const char *wf_sc(json_t *result, const char *field)
{
	return json_string_value(
		json_object_get(json_object_get(result, "structuredContent"), field));
}

static const char *wf_text(json_t *result)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

/* A successful call: asserts it is no error and that the case is now at step state. */
static void wf_step(int srv, const char *tool, const char *args, const char *state)
{
	struct it_response r;
	json_t *res = wf_tool(srv, tool, args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s %s: %s", tool, args,
		      r.body);
	ck_assert_str_eq(wf_sc(res, "state"), state);
	it_response_free(&r);
}

/* A refused call: isError, its text containing want, nothing changed on the case; when it
 * carries the case as it stands (a refusal of the step's own), that is the case's step. */
static void wf_refused(int srv, const char *tool, const char *args, const char *case_id,
		       const char *want)
{
	char *before =
		wf_sql("SELECT state || '/' || (SELECT count(*) FROM fleet.case_events e "
		       "WHERE e.case_id = c.case_id) FROM fleet.cases c WHERE case_id = '%s'",
		       case_id);
	struct it_response r;
	json_t *res = wf_tool(srv, tool, args, &r);
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s %s: %s", tool, args,
		      r.body);
	ck_assert_msg(wf_text(res) && strstr(wf_text(res), want), "%s: want \"%s\" in %s", tool,
		      want, r.body);
	const char *state = wf_sc(res, "state");
	ck_assert_msg(!state || strncmp(before, state, strlen(state)) == 0, "%s: state %s, case %s",
		      tool, state, before);
	it_response_free(&r);
	wf_expect(before,
		  "SELECT state || '/' || (SELECT count(*) FROM fleet.case_events e "
		  "WHERE e.case_id = c.case_id) FROM fleet.cases c WHERE case_id = '%s'",
		  case_id);
	free(before);
}

/* A call the user confirms on the server's side (elicitation): the question, then accepted
 * (it_tool_confirmed); asserts the case is now at step state. */
static void wf_confirmed(int srv, const char *tool, const char *args, const char *state)
{
	struct it_response r;
	json_t *res = it_tool_confirmed(wf_srv[srv].port, tool, args, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s: %s", tool, r.body);
	ck_assert_str_eq(wf_sc(res, "state"), state);
	it_response_free(&r);
}

/* marie reports bike damaged: its case id (new). */
static char *wf_report(const char *bike)
{
	char args[128];
	snprintf(args, sizeof args, "{\"bikeId\":\"%s\",\"issue\":\"brake_failure\"}", bike);
	struct it_response r;
	json_t *res = wf_tool(WF_MARIE, "report_damaged_bike", args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	char *c = mem_strdup(wf_sc(res, "caseId"));
	it_response_free(&r);
	return c;
}

/* {"caseId": c, <more>} as JSON text (static buffer: one at a time). */
static const char *wf_args(const char *c, const char *more)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "{\"caseId\":\"%s\"%s%s}", c, *more ? "," : "", more);
	return buf;
}

START_TEST(report_inspect_close_puts_the_bike_back_in_service)
{
	wf_fresh();
	char *c = wf_report("VL-990201");
	wf_expect("unavailable", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990201'");
	/* Steps that are not next are refused in words naming the case's step. */
	wf_refused(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"repairable\""), c,
		   "nobody has asked for one yet");
	wf_refused(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c,
		   "has not been inspected");
	wf_refused(WF_OLIVIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""), c,
		   "nobody has asked for an inspection yet");
	wf_step(WF_MARIE, "request_inspection", wf_args(c, "\"note\":\"brakes squeal\""),
		"inspection_requested");
	wf_refused(WF_MARIE, "request_inspection", wf_args(c, ""), c,
		   "already waiting for a technician's inspection");
	wf_refused(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c,
		   "can be closed once the inspection is recorded");
	/* A report joins the case at any step before closed. */
	free(wf_report("VL-990201"));
	wf_expect("2", "SELECT report_count FROM fleet.cases WHERE case_id = '%s'", c);
	wf_step(WF_TOM, "record_inspection",
		wf_args(c, "\"finding\":\"repairable\",\"note\":\"pads worn\""), "inspected");
	wf_refused(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"no_fault\""), c,
		   "already been inspected");
	wf_step(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), "closed");
	wf_refused(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c,
		   "is closed");
	wf_expect("available", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990201'");
	wf_expect("closed|repaired|repairable|olivia|ops-assistant",
		  "SELECT concat_ws('|', state, resolution, finding, closed_by, closed_via) "
		  "FROM fleet.cases WHERE case_id = '%s'",
		  c);
	wf_expect("unavailable>available|olivia",
		  "SELECT status_from || '>' || status_to || '|' || changed_by FROM "
		  "fleet.bike_status_history WHERE case_id = '%s'",
		  c);
	/* Who did each step, through which application and why. */
	wf_expect("opened:marie,report_added:marie,inspection_requested:marie:brakes squeal,"
		  "report_added:marie,inspected:tom:pads worn,closed:olivia",
		  "SELECT string_agg(concat_ws(':', kind, actor_subject, note), ',' ORDER BY "
		  "event_id) FROM fleet.case_events WHERE case_id = '%s'",
		  c);
	/* The bike's status shows no active case any more. */
	struct it_response r;
	json_t *res = wf_tool(WF_MARIE, "get_bike_status", "{\"bikeId\":\"VL-990201\"}", &r);
	ck_assert(json_is_null(
		json_object_get(json_object_get(res, "structuredContent"), "openCaseId")));
	it_response_free(&r);
	free(c);
}
END_TEST

/* A fresh case of bike, inspection asked by olivia, found beyond repair by tom: its id (new). */
static char *wf_beyond_repair(const char *bike)
{
	wf_fresh();
	char *c = wf_report(bike);
	wf_step(WF_OLIVIA, "request_inspection", wf_args(c, ""), "inspection_requested");
	wf_step(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"beyond_repair\""),
		"inspected");
	return c;
}

START_TEST(a_write_off_needs_another_operator)
{
	char *c = wf_beyond_repair("VL-990202");
	/* written_off needs its note, and the user's confirmation. */
	wf_refused(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"written_off\""), c,
		   "note");
	wf_confirmed(WF_OLIVIA, "close_case",
		     wf_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
		     "awaiting_approval");
	wf_expect("unavailable", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990202'");
	struct it_response r;
	json_t *res = wf_tool(WF_MARIE, "get_bike_status", "{\"bikeId\":\"VL-990202\"}", &r);
	ck_assert_str_eq(wf_sc(res, "openCaseId"), c); /* still its active case */
	it_response_free(&r);
	/* Not by the one who asked; refused by another, asked again, approved by another. */
	wf_refused(WF_OLIVIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""), c, "");
	wf_expect("1",
		  "SELECT count(*) FROM fleet.audit_log WHERE tool = 'decide_write_off' AND "
		  "target = '%s' AND subject = 'olivia' AND outcome = 'denied'",
		  c);
	wf_confirmed(WF_NADIA, "decide_write_off",
		     wf_args(c, "\"decision\":\"refuse\",\"note\":\"repair it\""), "inspected");
	wf_confirmed(WF_OLIVIA, "close_case",
		     wf_args(c, "\"resolution\":\"written_off\",\"note\":\"too costly\""),
		     "awaiting_approval");
	wf_confirmed(WF_NADIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""),
		     "closed");
	wf_expect("retired", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990202'");
	wf_expect("closed|written_off|olivia|nadia",
		  "SELECT concat_ws('|', state, resolution, write_off_requested_by, closed_by) "
		  "FROM fleet.cases WHERE case_id = '%s'",
		  c);
	wf_refused(WF_NADIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""), c,
		   "is closed");
	free(c);
}
END_TEST

/* A refusal of the step's own, by srv's caller: its words are for people (they contain want and
 * name no step code or tool: no "_" in them), and its structuredContent is the case c as it
 * stands, every column the tool's outputSchema requires, with its step and the tools that take
 * the next one (nextSteps, comma-separated in next). */
static void wf_refusal_facts(int srv, const char *tool, const char *args, const char *c,
			     const char *state, const char *next, const char *want)
{
	wf_refused(srv, tool, args, c, want);
	struct it_response r;
	json_t *res = wf_tool(srv, tool, args, &r);
	const char *text = wf_text(res);
	ck_assert_msg(text && !strchr(text, '_'), "%s: a code in the words: %s", tool, r.body);
	json_t *sc = json_object_get(res, "structuredContent");
	ck_assert_msg(json_is_object(sc), "%s: no structuredContent: %s", tool, r.body);
	static const char *const required[] = {"caseId",     "bikeId",     "state",    "finding",
					       "resolution", "bikeStatus", "updatedAt"};
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		ck_assert_msg(json_object_get(sc, required[i]), "%s: no %s: %s", tool, required[i],
			      r.body);
	ck_assert_str_eq(wf_sc(res, "caseId"), c);
	ck_assert_str_eq(wf_sc(res, "state"), state);
	char got[128] = "";
	json_t *steps = json_object_get(sc, "nextSteps");
	for (size_t i = 0; i < json_array_size(steps); i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "",
			 json_string_value(json_array_get(steps, i)));
	ck_assert_msg(json_is_array(steps) && strcmp(got, next) == 0,
		      "%s: nextSteps %s, want %s: %s", tool, got, next, r.body);
	it_response_free(&r);
}

START_TEST(a_refusal_says_the_step_in_words_and_carries_it_for_programs)
{
	wf_fresh();
	char *c = wf_report("VL-990206");
	wf_refusal_facts(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"repairable\""), c,
			 "open", "request_inspection", "nobody has asked for one yet");
	wf_step(WF_MARIE, "request_inspection", wf_args(c, ""), "inspection_requested");
	/* The words a person reads in the views, whole. */
	char want[256];
	snprintf(want, sizeof want,
		 "Case %s is waiting for a technician's inspection; it can be closed once the "
		 "inspection is recorded. Nothing was changed.",
		 c);
	struct it_response r;
	json_t *res =
		wf_tool(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), &r);
	ck_assert_str_eq(wf_text(res), want);
	it_response_free(&r);
	wf_refusal_facts(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c,
			 "inspection_requested", "record_inspection", want);
	/* Each keeps its audit row, as before. */
	wf_expect("3",
		  "SELECT count(*) FROM fleet.audit_log WHERE tool = 'close_case' AND "
		  "target = '%s' AND outcome = 'failed' AND detail = 'case_inspection_requested'",
		  c);
	wf_step(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"beyond_repair\""),
		"inspected");
	wf_refusal_facts(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"written_off\""), c,
			 "inspected", "close_case", "needs a note");
	wf_confirmed(WF_OLIVIA, "close_case",
		     wf_args(c, "\"resolution\":\"written_off\",\"note\":\"bent frame\""),
		     "awaiting_approval");
	wf_refusal_facts(WF_OLIVIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""), c,
			 "awaiting_approval", "decide_write_off", "another fleet operator");
	wf_refusal_facts(WF_MARIE, "request_inspection", wf_args(c, ""), c, "awaiting_approval",
			 "decide_write_off", "second fleet operator");
	wf_confirmed(WF_NADIA, "decide_write_off", wf_args(c, "\"decision\":\"approve\""),
		     "closed");
	wf_refusal_facts(WF_OLIVIA, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c,
			 "closed", "", "is closed");
	/* A case the caller cannot see is words only: nothing of it is shown. */
	res = wf_tool(WF_OLIVIA, "close_case",
		      "{\"caseId\":\"IC-99999999\",\"resolution\":\"repaired\"}", &r);
	ck_assert_msg(json_is_true(json_object_get(res, "isError")) &&
			      !json_object_get(res, "structuredContent") &&
			      !strchr(wf_text(res), '_'),
		      "%s", r.body);
	it_response_free(&r);
	free(c);
}
END_TEST

/* The names of the tools srv's caller lists, comma-separated, among the workflow's. */
static char *wf_listed(int srv)
{
	struct it_response r;
	char id[64];
	wf_rpc(srv, "tools/list", "", "", WF_CAPS_NONE, id, &r);
	json_t *tools = json_object_get(json_object_get(r.json, "result"), "tools");
	char buf[256] = "";
	static const char *const ours[] = {"request_inspection", "record_inspection", "close_case",
					   "decide_write_off"};
	for (size_t k = 0; k < 4; k++) {
		size_t i;
		json_t *t;
		json_array_foreach (tools, i, t)
			if (strcmp(json_string_value(json_object_get(t, "name")), ours[k]) == 0)
				snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s",
					 *buf ? "," : "", ours[k]);
	}
	it_response_free(&r);
	return mem_strdup(buf);
}

START_TEST(each_role_lists_its_steps)
{
	static const struct {
		int srv;
		const char *want;
	} cases[] = {
		{WF_MARIE, "request_inspection"},
		{WF_OLIVIA, "request_inspection,close_case,decide_write_off"},
		{WF_TOM, "record_inspection"},
		{WF_DEV, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = wf_listed(cases[i].srv);
		ck_assert_msg(strcmp(got, cases[i].want) == 0, "%s lists %s, want %s",
			      wf_who[cases[i].srv][0], got, cases[i].want);
		free(got);
	}
	/* A role the tool does not list is refused, audited, nothing changed. */
	wf_fresh();
	char *c = wf_report("VL-990205");
	wf_refused(WF_MARIE, "record_inspection", wf_args(c, "\"finding\":\"repairable\""), c, "");
	wf_refused(WF_TOM, "close_case", wf_args(c, "\"resolution\":\"repaired\""), c, "");
	free(c);
}
END_TEST

/* A task method of srv's caller on task id: its result (new reference), or NULL with *code the
 * JSON-RPC error's code. */
static json_t *wf_task_call(int srv, const char *method, const char *task, long *code)
{
	char params[256];
	snprintf(params, sizeof params, "\"taskId\":\"%s\"", task);
	struct it_response r;
	char id[64];
	wf_rpc(srv, method, task, params, WF_CAPS_TASKS, id, &r);
	json_t *res = json_incref(json_object_get(r.json, "result"));
	*code = json_integer_value(json_object_get(json_object_get(r.json, "error"), "code"));
	it_response_free(&r);
	return res;
}

/* marie asks for an inspection of c as a task: its id (new). */
static char *wf_task_start(const char *c)
{
	struct it_response r;
	json_t *res = it_tool(wf_srv[WF_MARIE].port, "request_inspection", wf_args(c, ""),
			      WF_CAPS_TASKS, NULL, &r);
	ck_assert_msg(
		json_is_string(json_object_get(res, "resultType")) &&
			strcmp(json_string_value(json_object_get(res, "resultType")), "task") == 0,
		"%s", r.body);
	ck_assert_str_eq(json_string_value(json_object_get(res, "status")), "working");
	char *id = mem_strdup(json_string_value(json_object_get(res, "taskId")));
	ck_assert_uint_ge(strlen(id), 32);
	it_response_free(&r);
	return id;
}

START_TEST(a_task_follows_the_inspection_for_its_creator_only)
{
	wf_fresh();
	char *c = wf_report("VL-990203");
	/* Without the extension declared: the ordinary result, never a task. */
	free(wf_report("VL-990204"));
	char *c2 = wf_sql("SELECT case_id FROM fleet.cases WHERE bike_id = 'VL-990204'");
	struct it_response r;
	json_t *res = wf_tool(WF_MARIE, "request_inspection", wf_args(c2, ""), &r);
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "complete");
	ck_assert_str_eq(wf_sc(res, "state"), "inspection_requested");
	it_response_free(&r);
	wf_expect("0", "SELECT count(*) FROM fleet.tasks WHERE case_id = '%s'", c2);

	char *task = wf_task_start(c);
	long code;
	json_t *got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_msg(got != NULL, "tasks/get: error %ld", code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "working");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(got, "statusMessage")),
				     "waiting for a technician"));
	json_decref(got);
	/* Another subject, or the same one through another application: as unknown. */
	static const int thieves[] = {WF_OLIVIA, WF_MARIE_OPS, WF_TOM};
	for (size_t i = 0; i < 3; i++) {
		ck_assert_ptr_null(wf_task_call(thieves[i], "tasks/get", task, &code));
		ck_assert_int_eq(code, -32602);
		ck_assert_ptr_null(wf_task_call(thieves[i], "tasks/cancel", task, &code));
		ck_assert_int_eq(code, -32602);
	}
	ck_assert_ptr_null(
		wf_task_call(WF_MARIE, "tasks/get", "00000000-0000-4000-8000-000000000000", &code));
	ck_assert_int_eq(code, -32602);
	wf_expect("inspection_requested", "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	/* The technician's step (another instance) completes it with the case's finding. */
	wf_step(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"no_fault\""), "inspected");
	got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_msg(got != NULL, "tasks/get: error %ld", code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "completed");
	json_t *result = json_object_get(got, "result");
	ck_assert(json_is_false(json_object_get(result, "isError")));
	/* A complete CallToolResult, as tools/call would answer it (the official Tasks library
	 * takes a completed task without it for a failed one). */
	ck_assert_str_eq(json_string_value(json_object_get(result, "resultType")), "complete");
	ck_assert_str_eq(wf_sc(result, "finding"), "no_fault");
	ck_assert_str_eq(wf_sc(result, "state"), "inspected");
	ck_assert_str_eq(wf_sc(result, "caseId"), c);
	json_decref(got);
	/* A finished task stays completed when cancelled. */
	got = wf_task_call(WF_MARIE, "tasks/cancel", task, &code);
	ck_assert_msg(got != NULL, "tasks/cancel: error %ld", code);
	json_decref(got);
	got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "completed");
	json_decref(got);
	wf_expect("inspected", "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	/* Expired: gone for its owner too, and purged. */
	free(wf_sql("UPDATE fleet.tasks SET created_at = now() - interval '2 days', updated_at = "
		    "now() - interval '2 days', expires_at = now() - interval '1 second' WHERE "
		    "task_id = '%s'",
		    task));
	ck_assert_ptr_null(wf_task_call(WF_MARIE, "tasks/get", task, &code));
	ck_assert_int_eq(code, -32602);
	wf_expect("1", "SELECT count(*) FROM fleet.tasks WHERE task_id = '%s'", task);
	/* The next task created, anyone's, takes the expired one away. */
	char *c3 = wf_report("VL-990206");
	char *next = wf_task_start(c3);
	wf_expect("0", "SELECT count(*) FROM fleet.tasks WHERE task_id = '%s'", task);
	wf_expect("1", "SELECT count(*) FROM fleet.tasks WHERE task_id = '%s'", next);
	free(next);
	free(c3);
	free(task);
	free(c2);
	free(c);
}
END_TEST

START_TEST(cancelling_a_waiting_inspection_reopens_the_case)
{
	wf_fresh();
	char *c = wf_report("VL-990204");
	char *task = wf_task_start(c);
	long code;
	json_t *got = wf_task_call(WF_MARIE, "tasks/cancel", task, &code);
	ck_assert_msg(got != NULL, "tasks/cancel: error %ld", code);
	json_decref(got);
	got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_msg(got != NULL, "tasks/get: error %ld", code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "cancelled");
	json_decref(got);
	wf_expect("open", "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	wf_expect("inspection_cancelled:marie",
		  "SELECT kind || ':' || actor_subject FROM fleet.case_events WHERE case_id = "
		  "'%s' ORDER BY event_id DESC LIMIT 1",
		  c);
	wf_expect("1",
		  "SELECT count(*) FROM fleet.audit_log WHERE tool = 'tasks/cancel' AND target = "
		  "'%s' AND outcome = 'ok'",
		  c);
	/* The technician now finds nothing to inspect; a new request starts again. */
	wf_refused(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"repairable\""), c,
		   "nobody has asked for one yet");
	free(task);
	task = wf_task_start(c);
	got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "working");
	json_decref(got);
	free(task);
	free(c);
}
END_TEST

/* olivia asks for c's write-off, noting note, straight through the write as the login role
 * (confirmed), her application waiting for the decision as the task task: asserts it opened. */
static void wf_write_off_task(const char *c, const char *note, const char *task)
{
	char *sql = mem_printf(
		"SELECT outcome || '|' || (task->>'task_id') || '|' || (task->>'status') FROM "
		"fleet.case_step_as(('olivia', 'ops-assistant', "
		"'{\"caseId\":\"%s\",\"resolution\":\"written_off\",\"note\":\"%s\"}', "
		"'close_case', NULL, encode(sha256('%s'), 'hex'), 'wf-sql-%s', true, '%s', '%s', "
		"60000, NULL)::fleet.write_call)",
		c, note, task, task, c, task);
	char *v = it_sql_as_app(sql);
	char *want = mem_printf("ok|%s|working", task);
	ck_assert_str_eq(v ? v : "(refused)", want);
	free(want);
	free(v);
	free(sql);
}

/* A refused write-off completes the task of the operator who asked, as a tool error. */
START_TEST(a_refused_write_off_completes_its_task_as_an_error)
{
	char *c = wf_beyond_repair("VL-990205");
	/* SQL level, as the login role: olivia's write-off opens her task in its transaction,
	 * then nadia refuses. */
	wf_write_off_task(c, "bent", "wf-task-write-off-0000000000000001");
	char *v;
	/* Nobody else reads it, nor olivia through another application. */
	v = it_sql_as_app("SELECT count(*) FROM fleet.task_for('nadia', 'ops-assistant', "
			  "ARRAY['wf-task-write-off-0000000000000001'])");
	ck_assert_str_eq(v, "0");
	free(v);
	v = it_sql_as_app(
		"SELECT count(*) FROM fleet.task_for('olivia', "
		"'customer-care-assistant', ARRAY['wf-task-write-off-0000000000000001'])");
	ck_assert_str_eq(v, "0");
	free(v);
	wf_confirmed(WF_NADIA, "decide_write_off",
		     wf_args(c, "\"decision\":\"refuse\",\"note\":\"repair it\""), "inspected");
	v = it_sql_as_app("SELECT status || '|' || is_error || '|' || (result->>'state') || '|' "
			  "|| (message LIKE '%refused by Nadia%repair it%') FROM "
			  "fleet.task_for('olivia', 'ops-assistant', "
			  "ARRAY['wf-task-write-off-0000000000000001'])");
	ck_assert_str_eq(v ? v : "(refused)", "completed|true|inspected|true");
	free(v);
	/* The change feed's read, whoever owns it, names the owner. */
	wf_expect("olivia|ops-assistant|completed",
		  "SELECT subject || '|' || client_id || '|' || status FROM "
		  "fleet.task_notice('wf-task-write-off-0000000000000001')");
	free(c);
}
END_TEST

/* marie's task of c (working), followed across a restart of every server: the new servers
 * answer the same task to its owner only, and complete it when tom records. Its own servers
 * (a test case without the shared ones): started, stopped, started again. */
/* An answer to a question about an earlier version of the case, on srv's server: nothing is
 * written, the caller is asked again, the new question starting with what happened since (each
 * of want in it) and sealed afresh; the call's one audit row says conflict. Returns the new
 * requestState (new). */
static char *wf_asked_again(int srv, const char *tool, const char *args, const char *state,
			    const char *case_id, const char *const *want)
{
	char *before =
		wf_sql("SELECT state || '/' || (SELECT count(*) FROM fleet.case_events e "
		       "WHERE e.case_id = c.case_id) FROM fleet.cases c WHERE case_id = '%s'",
		       case_id);
	char *n = wf_sql("SELECT count(*) FROM fleet.audit_log WHERE tool = '%s' AND target = '%s' "
			 "AND outcome = 'conflict'",
			 tool, case_id);
	long conflicts = strtol(n, NULL, 10);
	free(n);
	struct it_response r;
	json_t *res = it_tool_answer(wf_srv[srv].port, tool, args, state, true, &r);
	ck_assert_msg(json_is_string(json_object_get(res, "resultType")) &&
			      strcmp(json_string_value(json_object_get(res, "resultType")),
				     "input_required") == 0,
		      "%s answered a question about an earlier version: %s", tool, r.body);
	const char *q = json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(res, "inputRequests"), "confirm"),
				"params"),
		"message"));
	for (int i = 0; want[i]; i++)
		ck_assert_msg(q && strstr(q, want[i]), "want \"%s\" in %s", want[i], r.body);
	const char *again = json_string_value(json_object_get(res, "requestState"));
	ck_assert_msg(again && strcmp(again, state) != 0, "%s", r.body);
	char *fresh = mem_strdup(again);
	it_response_free(&r);
	wf_expect(before,
		  "SELECT state || '/' || (SELECT count(*) FROM fleet.case_events e "
		  "WHERE e.case_id = c.case_id) FROM fleet.cases c WHERE case_id = '%s'",
		  case_id);
	char want_conflicts[32];
	snprintf(want_conflicts, sizeof want_conflicts, "%ld", conflicts + 1);
	wf_expect(want_conflicts,
		  "SELECT count(*) FROM fleet.audit_log WHERE tool = '%s' AND target = '%s' AND "
		  "outcome = 'conflict'",
		  tool, case_id);
	free(before);
	return fresh;
}

START_TEST(an_approval_answers_the_write_off_request_it_was_asked_about)
{
	char *c = wf_beyond_repair("VL-990207");
	/* olivia asks for the write-off as a task (straight through the write: her application
	 * waits for the decision), noting why; nadia is asked to approve it. */
	wf_write_off_task(c, "frame cracked", "wf-task-stale-write-off-00000001");
	char *approve = mem_strdup(wf_args(c, "\"decision\":\"approve\""));
	char *question = NULL;
	char *state = it_tool_ask(wf_srv[WF_NADIA].port, "decide_write_off", approve, &question);
	ck_assert_msg(strstr(question, "Olivia Leroy") && strstr(question, "frame cracked"), "%s",
		      question);
	free(question);
	/* Meanwhile olivia withdraws her request and asks again, with another note. */
	long code = 0;
	json_t *got =
		wf_task_call(WF_OLIVIA, "tasks/cancel", "wf-task-stale-write-off-00000001", &code);
	ck_assert_msg(got != NULL, "tasks/cancel: error %ld", code);
	json_decref(got);
	wf_expect("inspected", "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	wf_confirmed(WF_OLIVIA, "close_case",
		     wf_args(c, "\"resolution\":\"written_off\",\"note\":\"seat tube snapped\""),
		     "awaiting_approval");
	/* nadia's yes to the first request approves nothing: she is told what happened and asked
	 * about the request as it stands. */
	char *fresh =
		wf_asked_again(WF_NADIA, "decide_write_off", approve, state, c,
			       (const char *const[]){"Olivia Leroy withdrew the write-off request",
						     "noting \"seat tube snapped\"",
						     "Approve the write-off", NULL});
	wf_expect("unavailable", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990207'");
	/* Her yes to that one closes the case, once. */
	struct it_response r;
	json_t *res =
		it_tool_answer(wf_srv[WF_NADIA].port, "decide_write_off", approve, fresh, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(wf_sc(res, "state"), "closed");
	it_response_free(&r);
	wf_expect("retired", "SELECT status FROM fleet.bikes WHERE bike_id = 'VL-990207'");
	wf_expect("write_off_approved:nadia",
		  "SELECT kind || ':' || actor_subject FROM fleet.case_events WHERE case_id = '%s' "
		  "ORDER BY event_id DESC LIMIT 1",
		  c);
	wf_expect("confirmation_required:1,conflict:1,ok:1",
		  "SELECT string_agg(outcome || ':' || n, ',' ORDER BY outcome) FROM (SELECT "
		  "outcome, count(*) AS n FROM fleet.audit_log WHERE tool = 'decide_write_off' AND "
		  "target = '%s' GROUP BY outcome) o",
		  c);
	/* The first answer sent once more changes nothing: the case is closed. */
	wf_refused(WF_NADIA, "decide_write_off", approve, c, "is closed");
	free(approve);
	free(fresh);
	free(state);
	free(c);
}
END_TEST

START_TEST(a_closing_answers_the_case_it_was_asked_about)
{
	char *c = wf_beyond_repair("VL-990208");
	char *close = mem_strdup(
		wf_args(c, "\"resolution\":\"written_off\",\"note\":\"rusted through\""));
	char *state = it_tool_ask(wf_srv[WF_NADIA].port, "close_case", close, NULL);
	/* Meanwhile olivia asks for a write-off and nadia refuses it: the case is inspected
	 * again, at the step nadia's question was about, but not as she saw it. */
	wf_confirmed(WF_OLIVIA, "close_case",
		     wf_args(c, "\"resolution\":\"written_off\",\"note\":\"frame cracked\""),
		     "awaiting_approval");
	wf_confirmed(WF_NADIA, "decide_write_off",
		     wf_args(c, "\"decision\":\"refuse\",\"note\":\"repair it\""), "inspected");
	char *fresh = wf_asked_again(
		WF_NADIA, "close_case", close, state, c,
		(const char *const[]){
			"Olivia Leroy asked for a write-off, noting \"frame cracked\"",
			"then Nadia Benali refused the write-off", "to be written off?", NULL});
	wf_expect("-|-",
		  "SELECT coalesce(write_off_requested_by, '-') || '|' || "
		  "coalesce(resolution, '-') FROM fleet.cases WHERE case_id = '%s'",
		  c);
	struct it_response r;
	json_t *res = it_tool_answer(wf_srv[WF_NADIA].port, "close_case", close, fresh, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(wf_sc(res, "state"), "awaiting_approval");
	it_response_free(&r);
	wf_expect("nadia|1",
		  "SELECT write_off_requested_by || '|' || (SELECT count(*) FROM "
		  "fleet.audit_log WHERE tool = 'close_case' AND target = '%s' AND "
		  "subject = 'nadia' AND outcome = 'ok') FROM fleet.cases WHERE case_id = "
		  "'%s'",
		  c, c);
	free(close);
	free(fresh);
	free(state);
	free(c);
}
END_TEST

START_TEST(a_task_outlives_a_restart_of_every_instance)
{
	wf_setup();
	wf_fresh();
	char *c = wf_report("VL-990201");
	char *task = wf_task_start(c);
	wf_teardown();
	wf_setup();
	long code;
	json_t *got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_msg(got != NULL, "tasks/get after the restart: error %ld", code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "taskId")), task);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "working");
	json_decref(got);
	ck_assert_ptr_null(wf_task_call(WF_OLIVIA, "tasks/get", task, &code));
	ck_assert_int_eq(code, -32602);
	wf_step(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"repairable\""), "inspected");
	got = wf_task_call(WF_MARIE, "tasks/get", task, &code);
	ck_assert_msg(got != NULL, "tasks/get: error %ld", code);
	ck_assert_str_eq(json_string_value(json_object_get(got, "status")), "completed");
	ck_assert_str_eq(wf_sc(json_object_get(got, "result"), "finding"), "repairable");
	json_decref(got);
	free(task);
	free(c);
	wf_teardown();
}
END_TEST

/* A tasks/get on the budget server: its HTTP status, with its Retry-After header (if any, the
 * header line's value, new) and the JSON-RPC error's code. */
static long wf_budget_get(const char *method, const char *name, const char *params,
			  char **retry_after, long *code)
{
	struct it_response r;
	char id[64];
	wf_rpc(WF_MARIE_BUDGET, method, name, params, WF_CAPS_TASKS, id, &r);
	*code = json_integer_value(json_object_get(json_object_get(r.json, "error"), "code"));
	const char *ra = r.headers ? strstr(r.headers, "Retry-After: ") : NULL;
	*retry_after = ra ? mem_strndup(ra + 13, strcspn(ra + 13, "\r\n")) : NULL;
	long status = r.status;
	it_response_free(&r);
	return status;
}

START_TEST(polling_a_task_spends_the_callers_reads)
{
	wf_fresh();
	char *c = wf_report("VL-990202");
	struct it_response r;
	json_t *res = it_tool(wf_srv[WF_MARIE_BUDGET].port, "request_inspection", wf_args(c, ""),
			      WF_CAPS_TASKS, NULL, &r);
	ck_assert_msg(json_object_get(res, "taskId") != NULL, "%s", r.body);
	char params[128];
	snprintf(params, sizeof params, "\"taskId\":\"%s\"",
		 json_string_value(json_object_get(res, "taskId")));
	char *task = mem_strdup(json_string_value(json_object_get(res, "taskId")));
	it_response_free(&r);
	long before = it_metric(&wf_srv[WF_MARIE_BUDGET],
				"bikaroo_rate_limit_rejections_total{reason=\"read\"}");
	char *ra;
	long code;
	/* The burst: three polls answered; the fourth refused with when to come back. */
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(wf_budget_get("tasks/get", task, params, &ra, &code), 200);
		ck_assert_int_eq(code, 0);
		free(ra);
	}
	ck_assert_int_eq(wf_budget_get("tasks/get", task, params, &ra, &code), 429);
	ck_assert_int_eq(code, -32029);
	ck_assert_msg(ra && strtol(ra, NULL, 10) >= 1, "Retry-After: %s", ra ? ra : "(none)");
	free(ra);
	/* The same budget as the caller's other reads: a read-only tool is refused as well. */
	ck_assert_int_eq(wf_budget_get("tools/call", "get_bike_status",
				       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":"
				       "\"VL-990202\"}",
				       &ra, &code),
			 429);
	ck_assert_int_eq(code, -32029);
	free(ra);
	ck_assert_int_eq(it_metric(&wf_srv[WF_MARIE_BUDGET],
				   "bikaroo_rate_limit_rejections_total{reason=\"read\"}"),
			 (before < 0 ? 0 : before) + 2);
	/* Another caller's polls are not marie's: olivia's tasks/get is answered (not found). */
	ck_assert_ptr_null(wf_task_call(WF_OLIVIA, "tasks/get", task, &code));
	ck_assert_int_eq(code, -32602);
	free(task);
	free(c);
}
END_TEST

/* A client holding a subscriptions/listen stream on its own thread. */
struct wf_listen {
	unsigned port;
	char body[512];
	const char *stop_at;  /* the client leaves once the stream holds it */
	volatile bool quit;   /* or when told to */
	pthread_mutex_t lock; /* over got and done */
	char *got;
	size_t len;
	bool done;
	pthread_t thread;
};

static size_t wf_listen_write(char *p, size_t size, size_t n, void *arg)
{
	struct wf_listen *l = arg;
	pthread_mutex_lock(&l->lock);
	l->got = mem_realloc(l->got, l->len + size * n + 1);
	memcpy(l->got + l->len, p, size * n);
	l->len += size * n;
	l->got[l->len] = '\0';
	bool stop = l->stop_at && strstr(l->got, l->stop_at);
	pthread_mutex_unlock(&l->lock);
	return stop ? 0 : size * n;
}

static int wf_listen_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	return ((struct wf_listen *)arg)->quit ? 1 : 0;
}

static void *wf_listen_run(void *arg)
{
	struct wf_listen *l = arg;
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", l->port);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
	h = curl_slist_append(h, "Mcp-Method: subscriptions/listen");
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, l->body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, wf_listen_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, l);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, wf_listen_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, l);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	pthread_mutex_lock(&l->lock);
	l->done = true;
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* srv's caller listens to task (declaring the extension) until the stream holds stop_at. */
static void wf_listen_start(struct wf_listen *l, int srv, const char *task, const char *stop_at)
{
	*l = (struct wf_listen){.port = wf_srv[srv].port, .stop_at = stop_at};
	snprintf(l->body, sizeof l->body,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"wf-listen-%d\",\"method\":\"subscriptions/listen\","
		 "\"params\":{\"notifications\":{\"taskIds\":[\"%s\"]},\"_meta\":{"
		 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		 "\"io.modelcontextprotocol/clientCapabilities\":" WF_CAPS_TASKS "}}}",
		 srv, task);
	pthread_mutex_init(&l->lock, NULL);
	pthread_create(&l->thread, NULL, wf_listen_run, l);
}

/* Waits (bounded) until l's stream holds text; whether it does. */
static bool wf_listen_wait(struct wf_listen *l, const char *text)
{
	for (int i = 0; i < 3000; i++) {
		pthread_mutex_lock(&l->lock);
		bool found = l->got && strstr(l->got, text);
		bool done = l->done;
		pthread_mutex_unlock(&l->lock);
		if (found || done)
			return found;
		it_sleep_ms(10);
	}
	return false;
}

/* Ends l's stream; what it received (new). */
static char *wf_listen_end(struct wf_listen *l)
{
	l->quit = true;
	pthread_join(l->thread, NULL);
	pthread_mutex_destroy(&l->lock);
	return l->got ? l->got : mem_strdup("");
}

#define WF_ACK "notifications/subscriptions/acknowledged"

START_TEST(a_task_notifies_its_owners_listen_only)
{
	wf_fresh();
	char *c = wf_report("VL-990203");
	char *task = wf_task_start(c);
	struct wf_listen own, others[2];
	static const int thieves[] = {WF_OLIVIA, WF_MARIE_OPS};
	wf_listen_start(&own, WF_MARIE, task, "\"status\":\"completed\"");
	for (int i = 0; i < 2; i++)
		wf_listen_start(&others[i], thieves[i], task, NULL);
	ck_assert_msg(wf_listen_wait(&own, WF_ACK), "no acknowledgement: %s", own.got);
	ck_assert_msg(wf_listen_wait(&own, task), "the task is not acknowledged: %s", own.got);
	for (int i = 0; i < 2; i++)
		ck_assert_msg(wf_listen_wait(&others[i], WF_ACK), "no acknowledgement: %s",
			      others[i].got);
	/* tom's step on another instance reaches marie's stream through the change feed. */
	wf_step(WF_TOM, "record_inspection", wf_args(c, "\"finding\":\"no_fault\""), "inspected");
	ck_assert_msg(wf_listen_wait(&own, "\"status\":\"completed\""), "no notification: %s",
		      own.got);
	char *got = wf_listen_end(&own);
	const char *n = strstr(got, "\"method\":\"notifications/tasks\"");
	ck_assert_msg(n != NULL, "%s", got);
	ck_assert_msg(strstr(n, task) && strstr(n, "\"finding\":\"no_fault\"") &&
			      strstr(n, "io.modelcontextprotocol/subscriptionId"),
		      "%s", n);
	free(got);
	/* The others heard nothing of it, not even that it exists. */
	it_sleep_ms(500);
	for (int i = 0; i < 2; i++) {
		got = wf_listen_end(&others[i]);
		ck_assert_msg(strstr(got, WF_ACK) && !strstr(got, task) &&
				      !strstr(got, "notifications/tasks"),
			      "%s heard: %s", wf_who[thieves[i]][0], got);
		free(got);
	}
	free(task);
	free(c);
}
END_TEST

CHECK_SUITE(workflow)
{
	Suite *s = suite_create("workflow");
	TCase *tc = tcase_create("workflow");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, wf_setup, wf_teardown);
	tcase_add_test(tc, report_inspect_close_puts_the_bike_back_in_service);
	tcase_add_test(tc, a_write_off_needs_another_operator);
	tcase_add_test(tc, a_refusal_says_the_step_in_words_and_carries_it_for_programs);
	tcase_add_test(tc, an_approval_answers_the_write_off_request_it_was_asked_about);
	tcase_add_test(tc, a_closing_answers_the_case_it_was_asked_about);
	tcase_add_test(tc, each_role_lists_its_steps);
	tcase_add_test(tc, a_task_follows_the_inspection_for_its_creator_only);
	tcase_add_test(tc, cancelling_a_waiting_inspection_reopens_the_case);
	tcase_add_test(tc, a_refused_write_off_completes_its_task_as_an_error);
	tcase_add_test(tc, polling_a_task_spends_the_callers_reads);
	tcase_add_test(tc, a_task_notifies_its_owners_listen_only);
	suite_add_tcase(s, tc);
	TCase *restart = tcase_create("restart");
	tcase_set_timeout(restart, 120);
	tcase_add_test(restart, a_task_outlives_a_restart_of_every_instance);
	suite_add_tcase(s, restart);
	return s;
}
