/* Integration tests of report_damaged_bike and the business state behind it: what a report
 * writes, idempotency, the perimeter and rights (nothing written when refused), caseId rules,
 * limits and SQL metacharacters, 20 concurrent reports on one bike, a server killed with -9 in
 * the middle of reports, the audit log, server-side confirmation, and the case read. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "domain/pg/db.h"
#include "harness.h"
#include "server/protocol/mcp.h"
#include "tests/check_main.h"

#define RP_CAPS_NONE "{}"
#define RP_CAPS_ELICIT "{\"elicitation\":{}}"

/* Starts a server acting as subject via client (extra env may add more). */
static void rp_start(struct it_server *s, const char *subject, const char *client,
		     const char *extra)
{
	char se[128], ce[128];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", client);
	const char *env[] = {se, ce, extra, NULL};
	ck_assert_int_eq(it_server_start(s, env), 0);
}

/* tools/call report_damaged_bike with args (borrowed), the declared client capabilities, and
 * extra params JSON members (e.g. "\"requestState\":\"...\",") or "". */
static void rp_call_ex(unsigned port, json_t *args, const char *caps, const char *extra, int id,
		       struct it_response *r)
{
	char *a = json_dumps(args, JSON_COMPACT);
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"report_damaged_bike\",\"arguments\":%s,%s\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
		id, a, extra, caps);
	const char *headers[] = {
		"Content-Type: application/json",   "Accept: application/json, text/event-stream",
		"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
		"Mcp-Name: report_damaged_bike",    NULL};
	it_http(port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
	free(a);
}

/* A plain report; returns the result object (borrowed from r). */
static json_t *rp_call(unsigned port, json_t *args, struct it_response *r)
{
	rp_call_ex(port, args, RP_CAPS_NONE, "", 42, r);
	ck_assert_msg(r->status == 200, "status %ld: %s", r->status, r->body);
	json_t *res = json_object_get(r->json, "result");
	ck_assert_msg(res != NULL, "no result: %s", r->body);
	return res;
}

static const char *rp_text(json_t *result)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

static const char *rp_sc(json_t *result, const char *field)
{
	return json_string_value(
		json_object_get(json_object_get(result, "structuredContent"), field));
}

static char *rp_vsql(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *rp_vsql(const char *fmt, va_list ap)
{
	char sql[4096];
	vsnprintf(sql, sizeof sql, fmt, ap);
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	return v;
}

/* it_sql with printf formatting; returns new memory (fails the test on SQL error). */
static char *rp_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *rp_sql(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = rp_vsql(fmt, ap);
	va_end(ap);
	return v;
}

/* The first value of a formatted query as a number. */
static long rp_count(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long rp_count(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = rp_vsql(fmt, ap);
	va_end(ap);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/* The database's clock now (new text): rows a test writes after it are the test's own, whatever
 * the demo data or other suites left on the same bike (reports, cases closed or open, audit
 * rows). */
static char *rp_now(void)
{
	char *t = it_sql("SELECT clock_timestamp()::text");
	ck_assert_ptr_nonnull(t);
	return t;
}

/* A digest of every business table (not the audit log): equal before and after = nothing
 * was written. */
static char *rp_snapshot(void)
{
	return it_sql(
		"SELECT md5(concat_ws('|',"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.damage_reports t),"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.cases t),"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.case_events t),"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.bike_status_history "
		"t),"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.idempotent_calls t),"
		" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.bikes t)))");
}

static json_t *rp_args(const char *bike, const char *issue)
{
	return json_pack("{s:s, s:s}", "bikeId", bike, "issue", issue);
}

/* ---- the descriptor hosts see ------------------------------------------------------------ */

START_TEST(tools_list_describes_report_damaged_bike)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	struct it_response r;
	it_mcp(s.port, "tools/list", NULL, "", &r);
	json_t *tools = json_object_get(json_object_get(r.json, "result"), "tools");
	json_t *t = NULL, *each;
	size_t i;
	json_array_foreach (tools, i, each)
		if (strcmp(json_string_value(json_object_get(each, "name")),
			   "report_damaged_bike") == 0)
			t = each;
	ck_assert_msg(t != NULL, "%s", r.body);
	json_t *ann = json_object_get(t, "annotations");
	ck_assert(json_is_false(json_object_get(ann, "readOnlyHint")));
	ck_assert(json_is_false(json_object_get(ann, "destructiveHint")));
	ck_assert(json_is_false(json_object_get(ann, "idempotentHint")));
	ck_assert_ptr_nonnull(
		strstr(json_string_value(json_object_get(t, "description")), "idempotencyKey"));
	json_t *in = json_object_get(t, "inputSchema");
	ck_assert(json_is_false(json_object_get(in, "additionalProperties")));
	json_t *props = json_object_get(in, "properties");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(props, "issue"), "enum")),
			  8);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(props, "description"),
							    "maxLength")),
			 2000);
	ck_assert_ptr_nonnull(json_object_get(props, "caseId"));
	ck_assert_ptr_nonnull(json_object_get(props, "idempotencyKey"));
	json_t *req = json_object_get(in, "required");
	ck_assert_uint_eq(json_array_size(req), 2);
	json_t *out = json_object_get(json_object_get(t, "outputSchema"), "required");
	ck_assert_uint_eq(json_array_size(out), 5);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- what a report writes -------------------------------------------------------------- */

START_TEST(report_writes_everything_in_one_transaction)
{
	struct it_server s;
	rp_start(&s, "olivia", "ops-assistant", NULL);
	char *since = rp_now();
	json_t *args = json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2102", "issue", "flat_tire",
				 "description", "Rear tyre flat at the station.");
	struct it_response r;
	json_t *res = rp_call(s.port, args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(rp_sc(res, "bikeId"), "VL-2102");
	ck_assert_str_eq(rp_sc(res, "status"), "unavailable");
	const char *report = rp_sc(res, "reportId"), *cse = rp_sc(res, "caseId");
	ck_assert(strncmp(report, "DR-", 3) == 0 && strncmp(cse, "IC-", 3) == 0);
	const char *at = rp_sc(res, "recordedAt");
	ck_assert_msg(strlen(at) >= 20 && at[10] == 'T' && (at[strlen(at) - 1] == 'Z'), "%s", at);
	/* Every row, stamped with the acting subject and client. */
	char *v = rp_sql("SELECT concat_ws(',', r.bike_id, r.region, r.case_id, r.issue,"
			 " r.status_before, r.status_after, r.reported_by, r.reported_via)"
			 " FROM fleet.damage_reports r WHERE r.report_id = '%s'",
			 report);
	char want[256];
	snprintf(want, sizeof want,
		 "VL-2102,FR-PAR,%s,flat_tire,available,unavailable,olivia,"
		 "ops-assistant",
		 cse);
	ck_assert_str_eq(v, want);
	free(v);
	v = rp_sql("SELECT concat_ws(',', state, opened_by, opened_via, report_count)"
		   " FROM fleet.cases WHERE case_id = '%s'",
		   cse);
	ck_assert_str_eq(v, "open,olivia,ops-assistant,1");
	free(v);
	v = rp_sql("SELECT string_agg(kind || '/' || actor_subject, ',' ORDER BY event_id)"
		   " FROM fleet.case_events WHERE case_id = '%s'",
		   cse);
	ck_assert_str_eq(v, "opened/olivia,report_added/olivia");
	free(v);
	v = rp_sql("SELECT concat_ws(',', status_from, status_to, changed_by, changed_via)"
		   " FROM fleet.bike_status_history WHERE report_id = '%s'",
		   report);
	ck_assert_str_eq(v, "available,unavailable,olivia,ops-assistant");
	free(v);
	v = rp_sql("SELECT concat_ws(',', subject, client_id, tool, target, outcome, request_id,"
		   " length(args_digest)) FROM fleet.audit_log WHERE report_id = '%s'",
		   report);
	ck_assert_str_eq(v, "olivia,ops-assistant,report_damaged_bike,VL-2102,ok,42,64");
	free(v);
	v = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2102'");
	ck_assert_str_eq(v, "unavailable");
	free(v);
	/* get_bike_status shows the open case. */
	struct it_response g;
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2102\"}", &g);
	json_t *gsc = json_object_get(json_object_get(g.json, "result"), "structuredContent");
	ck_assert_str_eq(json_string_value(json_object_get(gsc, "openCaseId")), cse);
	it_response_free(&g);
	/* Without a key, the same call again is a new report in the same open case. */
	struct it_response r2;
	json_t *res2 = rp_call(s.port, args, &r2);
	ck_assert_str_ne(rp_sc(res2, "reportId"), report);
	ck_assert_str_eq(rp_sc(res2, "caseId"), cse);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '%s'"
				  " AND recorded_at >= '%s'",
				  "VL-2102", since),
			 2);
	free(since);
	ck_assert_int_eq(
		rp_count("SELECT count(*) FROM fleet.cases WHERE bike_id = '%s' AND state = 'open'",
			 "VL-2102"),
		1);
	it_response_free(&r2);
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

START_TEST(out_of_service_bike_keeps_its_status)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	char *before = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2108'");
	ck_assert_str_eq(before, "in_repair");
	json_t *args = rp_args("VL-2108", "chain_broken");
	struct it_response r;
	json_t *res = rp_call(s.port, args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(rp_sc(res, "status"), "in_repair");
	char *after = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2108'");
	ck_assert_str_eq(after, "in_repair");
	free(before);
	free(after);
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- idempotency ------------------------------------------------------------------------- */

START_TEST(idempotency_key_replays_and_refuses_other_arguments)
{
	struct it_server s, m;
	rp_start(&s, "olivia", "ops-assistant", NULL);
	rp_start(&m, "marie", "customer-care-assistant", NULL);
	char *since = rp_now();
	json_t *args = json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2111", "issue", "brake_failure",
				 "idempotencyKey", "ticket-4711");
	struct it_response r1, r2, r3, r4;
	json_t *a = rp_call(s.port, args, &r1);
	ck_assert_msg(json_is_false(json_object_get(a, "isError")), "%s", r1.body);
	char *snap = rp_snapshot();
	/* The same key and arguments: the first result, nothing written. */
	json_t *b = rp_call(s.port, args, &r2);
	ck_assert(json_equal(json_object_get(a, "structuredContent"),
			     json_object_get(b, "structuredContent")));
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	/* The same key with other arguments: an error, nothing written. */
	json_object_set_new(args, "issue", json_string("flat_tire"));
	json_t *c = rp_call(s.port, args, &r3);
	ck_assert(json_is_true(json_object_get(c, "isError")));
	ck_assert_ptr_nonnull(strstr(rp_text(c), "already used with other arguments"));
	snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	/* Another subject's identical key is another key: a new report. */
	json_object_set_new(args, "issue", json_string("brake_failure"));
	json_t *d = rp_call(m.port, args, &r4);
	ck_assert_msg(json_is_false(json_object_get(d, "isError")), "%s", r4.body);
	ck_assert_str_ne(rp_sc(d, "reportId"), rp_sc(a, "reportId"));
	ck_assert_str_eq(rp_sc(d, "caseId"), rp_sc(a, "caseId"));
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE target = '%s'"
				  " AND tool = 'report_damaged_bike'"
				  " AND outcome IN ('replayed', 'conflict') AND at >= '%s'",
				  "VL-2111", since),
			 2);
	free(since);
	free(snap);
	it_response_free(&r1);
	it_response_free(&r2);
	it_response_free(&r3);
	it_response_free(&r4);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ck_assert_int_eq(it_server_stop(&m), 0);
}
END_TEST

/* A replay whose recorded result is not what the declaration says (a column it does not list,
 * a value of another type, a column it requires missing) is our bug: an internal error, logged,
 * never an answer that breaks the output schema the tool lists. */
START_TEST(a_result_the_declaration_does_not_describe_is_never_answered)
{
	struct it_server s;
	rp_start(&s, "olivia", "ops-assistant", NULL);
	json_t *args = json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2117", "issue", "brake_failure",
				 "idempotencyKey", "ticket-4712");
	struct it_response r;
	json_t *a = rp_call(s.port, args, &r);
	ck_assert_msg(json_is_false(json_object_get(a, "isError")), "%s", r.body);
	char *report = mem_strdup(rp_sc(a, "reportId"));
	it_response_free(&r);
	static const char *const planted[] = {"result || '{\"surprise\": 1}'",
					      "jsonb_set(result, '{status}', '7')",
					      "result - 'report_id'"};
	char *kept = rp_sql("SELECT result::text FROM fleet.idempotent_calls WHERE subject ="
			    " 'olivia' AND idem_key = 'ticket-4712'");
	for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
		free(rp_sql("UPDATE fleet.idempotent_calls SET result = %s WHERE subject ="
			    " 'olivia' AND idem_key = 'ticket-4712' RETURNING 1",
			    planted[i]));
		rp_call_ex(s.port, args, RP_CAPS_NONE, "", 43, &r);
		ck_assert_msg(json_integer_value(json_object_get(json_object_get(r.json, "error"),
								 "code")) == MCP_INTERNAL_ERROR,
			      "%s: %s", planted[i], r.body);
		it_response_free(&r);
		free(rp_sql("UPDATE fleet.idempotent_calls SET result = '%s' WHERE subject ="
			    " 'olivia' AND idem_key = 'ticket-4712' RETURNING 1",
			    kept));
	}
	ck_assert_int_eq(it_log_count(&s, "its result is not what its declaration says"), 3);
	/* The record as it was replays as before. */
	json_t *b = rp_call(s.port, args, &r);
	ck_assert_str_eq(rp_sc(b, "reportId"), report);
	it_response_free(&r);
	free(report);
	free(kept);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- perimeter and rights: refused, and nothing written ------------------------------------ */

START_TEST(other_region_is_refused_and_nothing_is_written)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	/* Other suites may have audited refusals of this bike already: count this test's own. */
	long audited_before =
		rp_count("SELECT count(*) FROM fleet.audit_log WHERE subject = 'marie'"
			 " AND tool = 'report_damaged_bike' AND target = '%s'"
			 " AND outcome = 'not_found'",
			 "VL-2047");
	char *snap = rp_snapshot();
	json_t *lyo = rp_args("VL-2047", "flat_tire"), *none = rp_args("VL-999999", "flat_tire");
	struct it_response a, b;
	json_t *ra = rp_call(s.port, lyo, &a), *rb = rp_call(s.port, none, &b);
	ck_assert(json_is_true(json_object_get(ra, "isError")));
	ck_assert(json_is_true(json_object_get(rb, "isError")));
	char ta[512], tb[512];
	snprintf(ta, sizeof ta, "%s", rp_text(ra));
	snprintf(tb, sizeof tb, "%s", rp_text(rb));
	char *p = strstr(ta, "VL-2047"), *q = strstr(tb, "VL-999999");
	ck_assert(p && q);
	memmove(p + 2, p + 7, strlen(p + 7) + 1); /* both ids become "VL" */
	memmove(q + 2, q + 9, strlen(q + 9) + 1);
	ck_assert_str_eq(ta, tb);
	ck_assert_ptr_null(strstr(rp_text(ra), "FR-LYO"));
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE subject = 'marie'"
				  " AND tool = 'report_damaged_bike' AND target = '%s'"
				  " AND outcome = 'not_found'",
				  "VL-2047"),
			 audited_before + 1);
	free(snap);
	free(snap2);
	it_response_free(&a);
	it_response_free(&b);
	json_decref(lyo);
	json_decref(none);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* Who is refused, and the reason the answer gives (the words of the declarations' schema). */
static const char *const rp_refused[][3] = {
	{"dev", "customer-care-assistant",
	 "your role is viewer, and reporting damage is open to these roles only: customer_care, "
	 "fleet_operator."},
	{"marie", "developer-ide", "this application is not authorised for reporting damage."},
	{"fleet-sync", "customer-care-assistant",
	 "you are registered as a machine, and reporting damage is open to people acting in "
	 "person only."},
	{"nobody", "customer-care-assistant",
	 "you or this application are not registered, or no longer active."},
	{"marie", "unregistered-app",
	 "you or this application are not registered, or no longer active."}};
#define RP_NREFUSED ((int)(sizeof rp_refused / sizeof rp_refused[0]))

/* One identity per loop iteration (_i): a viewer, a read-only client application, a machine
 * principal, an unknown subject, an unknown client; the last iteration is a token without
 * fleet:report (403 insufficient_scope). Each is refused, audited, and writes nothing. */
START_TEST(viewer_readonly_client_and_machine_cannot_report)
{
	char *snap = rp_snapshot();
	struct it_server s;
	json_t *args = rp_args("VL-2114", "frame_damage");
	struct it_response r;
	if (_i < RP_NREFUSED) {
		const char *subject = rp_refused[_i][0], *client = rp_refused[_i][1];
		rp_start(&s, subject, client, NULL);
		json_t *res = rp_call(s.port, args, &r);
		ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s/%s: %s", subject,
			      client, r.body);
		ck_assert_ptr_nonnull(strstr(rp_text(res), "not permitted"));
		ck_assert_msg(strstr(rp_text(res), rp_refused[_i][2]), "%s", rp_text(res));
		char *n = rp_sql("SELECT count(*) FROM fleet.audit_log WHERE subject = '%s' AND"
				 " client_id = '%s' AND target = 'VL-2114' AND outcome = 'denied'",
				 subject, client);
		ck_assert_str_eq(n, "1");
		free(n);
	} else {
		rp_start(&s, "marie", "customer-care-assistant", "BIKAROO_LOCAL_SCOPES=fleet:read");
		rp_call_ex(s.port, args, RP_CAPS_NONE, "", 7, &r);
		ck_assert_int_eq(r.status, 403);
		ck_assert_int_eq(
			rp_count("SELECT count(*) FROM fleet.audit_log WHERE subject = 'marie'"
				 " AND target = '%s' AND outcome = 'denied' AND request_id = '7'",
				 "VL-2114"),
			1);
	}
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	free(snap);
	free(snap2);
}
END_TEST

START_TEST(rls_refuses_writes_outside_the_function)
{
	/* As fleet_app acting as marie: no reporting right fixed, so no write passes the
	 * policies, even a correctly stamped one; and the audit log is out of reach. */
	char *v = it_sql_as_app("SELECT fleet.act_as('marie','customer-care-assistant');"
				"UPDATE fleet.bikes SET status = 'lost' WHERE bike_id = 'VL-2114';"
				"SELECT count(*) FROM fleet.bikes WHERE bike_id = 'VL-2114'"
				" AND status = 'lost'");
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, "0"); /* visible, but not updated */
	free(v);
	ck_assert_ptr_null(it_sql_as_app("SELECT count(*) FROM fleet.audit_log"));
	ck_assert_ptr_null(it_sql_as_app(
		"INSERT INTO fleet.audit_log (subject, client_id, tool, args_digest, outcome)"
		" VALUES ('x', 'y', 'z', repeat('a', 64), 'ok')"));
	ck_assert_ptr_null(it_sql_as_app("DELETE FROM fleet.damage_reports"));
	/* Even with the right set, a row stamped with another subject is refused. */
	char *case_id = it_sql("SELECT case_id FROM fleet.cases WHERE region = 'FR-PAR' LIMIT 1");
	ck_assert_str_ne(case_id, "");
	char *since = rp_now();
	char *sql = mem_printf(
		"SELECT fleet.act_as('marie','customer-care-assistant');"
		"SELECT set_config('app.may_report', 'on', true);"
		"INSERT INTO fleet.case_events (case_id, region, kind, actor_subject, "
		"actor_client, at)"
		" VALUES ('%s', 'FR-PAR', 'closed', 'olivia', 'customer-care-assistant', now())",
		case_id);
	ck_assert_ptr_null(it_sql_as_app(sql));
	free(sql);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.case_events WHERE case_id = '%s'"
				  " AND kind = 'closed' AND actor_subject = 'olivia'"
				  " AND at >= '%s'",
				  case_id, since),
			 0);
	free(since);
	free(case_id);
	/* The audit writer needs an identity. */
	ck_assert_ptr_null(it_sql_as_app(
		"SELECT fleet.audit_record('t', NULL, repeat('a', 64), 'ok', NULL, NULL, NULL)"));
}
END_TEST

/* ---- caseId rules -------------------------------------------------------------------------- */

START_TEST(case_id_must_be_open_visible_and_for_this_bike)
{
	struct it_server o, m;
	rp_start(&o, "olivia", "ops-assistant", NULL);
	rp_start(&m, "marie", "customer-care-assistant", NULL);
	struct it_response r1, r2, r3, r4, r5, r6, r7;
	json_t *a1 = rp_args("VL-2120", "lighting_fault");
	json_t *res = rp_call(o.port, a1, &r1);
	const char *case_a = rp_sc(res, "caseId");
	ck_assert_ptr_nonnull(case_a);
	/* A fleet operator names the open case: extended. */
	json_object_set_new(a1, "caseId", json_string(case_a));
	res = rp_call(o.port, a1, &r2);
	ck_assert_str_eq(rp_sc(res, "caseId"), case_a);
	char *snap = rp_snapshot();
	/* Another bike's case. */
	json_t *b = rp_args("VL-2123", "lighting_fault");
	json_object_set_new(b, "caseId", json_string(case_a));
	res = rp_call(o.port, b, &r3);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	ck_assert_ptr_nonnull(strstr(rp_text(res), "another bike"));
	/* A customer-care agent who neither opened nor reported into the case: not found, in
	 * the same words as a case that does not exist. */
	res = rp_call(m.port, a1, &r4);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	char t1[512], t2[512];
	snprintf(t1, sizeof t1, "%s", rp_text(res));
	json_object_set_new(a1, "caseId", json_string("IC-99999999"));
	res = rp_call(m.port, a1, &r5);
	snprintf(t2, sizeof t2, "%s", rp_text(res));
	char *p = strstr(t1, case_a), *q = strstr(t2, "IC-99999999");
	ck_assert(p && q);
	memmove(p + 2, p + strlen(case_a), strlen(p + strlen(case_a)) + 1);
	memmove(q + 2, q + 11, strlen(q + 11) + 1);
	ck_assert_str_eq(t1, t2);
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	/* A closed case. */
	char *x = rp_sql("UPDATE fleet.cases SET state = 'closed', closed_at = now()"
			 " WHERE case_id = '%s'",
			 case_a);
	free(x);
	json_object_set_new(a1, "caseId", json_string(case_a));
	res = rp_call(o.port, a1, &r6);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	ck_assert_ptr_nonnull(strstr(rp_text(res), "closed"));
	/* Without caseId, the next report opens a new case. */
	json_object_del(a1, "caseId");
	res = rp_call(o.port, a1, &r7);
	ck_assert_str_ne(rp_sc(res, "caseId"), case_a);
	free(snap);
	it_response_free(&r1);
	it_response_free(&r2);
	it_response_free(&r3);
	it_response_free(&r4);
	it_response_free(&r5);
	it_response_free(&r6);
	it_response_free(&r7);
	json_decref(a1);
	json_decref(b);
	ck_assert_int_eq(it_server_stop(&o), 0);
	ck_assert_int_eq(it_server_stop(&m), 0);
}
END_TEST

/* ---- limits and metacharacters --------------------------------------------------------------- */

static char *rp_repeat(const char *unit, size_t n)
{
	size_t u = strlen(unit);
	char *s = mem_alloc(u * n + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * u, unit, u);
	s[u * n] = '\0';
	return s;
}

/* A string argument's limit counts characters (code points), as its JSON Schema says, never
 * bytes: field at limit characters of 1, 2 and 4 bytes each is stored whole (in fleet.table's
 * column, on the row whose report is report), one more character is refused and writes
 * nothing. */
static void rp_limit_in_characters(const char *bike, const char *field, size_t limit,
				   const char *table, const char *column, const char *report)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	char *since = rp_now();
	static const char *const units[] = {"a", "\xc3\xa9", "\xf0\x9f\x9a\xb2"}; /* a, é, bike */
	char want[24];
	snprintf(want, sizeof want, "%zu", limit);
	for (size_t u = 0; u < 3; u++) {
		char *at = rp_repeat(units[u], limit), *over = rp_repeat(units[u], limit + 1);
		json_t *args = rp_args(bike, "other");
		json_object_set_new(args, field, json_string(at));
		struct it_response r;
		json_t *res = rp_call(s.port, args, &r);
		ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s of %zu x %s: %s",
			      field, limit, units[u], r.body);
		char *n = rp_sql("SELECT char_length(%s) FROM fleet.%s WHERE %s = '%s'", column,
				 table, report, rp_sc(res, "reportId"));
		ck_assert_str_eq(n, want);
		free(n);
		it_response_free(&r);
		char *snap = rp_snapshot();
		json_object_set_new(args, field, json_string(over));
		res = rp_call(s.port, args, &r);
		ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s of %zu x %s: %s",
			      field, limit + 1, units[u], r.body);
		ck_assert_ptr_nonnull(strstr(rp_text(res), field));
		char *snap2 = rp_snapshot();
		ck_assert_str_eq(snap, snap2);
		free(snap);
		free(snap2);
		it_response_free(&r);
		json_decref(args);
		free(at);
		free(over);
	}
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE target = '%s'"
				  " AND tool = 'report_damaged_bike'"
				  " AND outcome = 'invalid' AND at >= '%s'",
				  bike, since),
			 3);
	free(since);
	ck_assert_int_eq(it_server_stop(&s), 0);
}

START_TEST(description_limit_is_2000_characters)
{
	rp_limit_in_characters("VL-2126", "description", 2000, "damage_reports", "description",
			       "report_id");
}
END_TEST

/* The published inputSchema says maxLength 200: 200 "é" (400 bytes) or 200 four-byte
 * characters are one key, 201 are refused. */
START_TEST(idempotency_key_limit_is_200_characters)
{
	rp_limit_in_characters("VL-2162", "idempotencyKey", 200, "idempotent_calls", "idem_key",
			       "result->>'report_id'");
}
END_TEST

START_TEST(sql_metacharacters_are_stored_literally)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	const char *desc = "'); DROP TABLE fleet.bikes; -- \\ % _ $1 $$ \" ; SELECT pg_sleep(10)";
	const char *key = "k'; DELETE FROM fleet.cases; --\\%_$$";
	json_t *args = json_pack("{s:s, s:s, s:s, s:s}", "bikeId", "VL-2129", "issue", "other",
				 "description", desc, "idempotencyKey", key);
	struct it_response r;
	json_t *res = rp_call(s.port, args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	char *stored = rp_sql("SELECT description FROM fleet.damage_reports WHERE report_id = '%s'",
			      rp_sc(res, "reportId"));
	ck_assert_str_eq(stored, desc);
	free(stored);
	char *k = rp_sql("SELECT idem_key FROM fleet.idempotent_calls"
			 " WHERE result->>'report_id' = '%s'",
			 rp_sc(res, "reportId"));
	ck_assert_str_eq(k, key);
	free(k);
	char *n = it_sql("SELECT count(*) > 1000 FROM fleet.bikes");
	ck_assert_str_eq(n, "t");
	free(n);
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- concurrency ----------------------------------------------------------------------------- */

struct rp_racer {
	unsigned port;
	int n;
	pthread_barrier_t *go;
	int ok;
	char report[32];
	char case_id[32];
	char failure[256];
};

static void *rp_race(void *p)
{
	struct rp_racer *a = p;
	json_t *args = json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2132", "issue", "brake_failure",
				 "description", "concurrent report");
	pthread_barrier_wait(a->go);
	struct it_response r;
	rp_call_ex(a->port, args, RP_CAPS_NONE, "", 100 + a->n, &r);
	json_t *res = json_object_get(r.json, "result");
	json_t *sc = json_object_get(res, "structuredContent");
	if (r.status == 200 && json_is_false(json_object_get(res, "isError")) && sc) {
		a->ok = 1;
		snprintf(a->report, sizeof a->report, "%s",
			 json_string_value(json_object_get(sc, "reportId")));
		snprintf(a->case_id, sizeof a->case_id, "%s",
			 json_string_value(json_object_get(sc, "caseId")));
	} else {
		snprintf(a->failure, sizeof a->failure, "%ld %s", r.status, r.body);
	}
	it_response_free(&r);
	json_decref(args);
	return NULL;
}

START_TEST(twenty_concurrent_reports_on_one_bike)
{
	struct it_server a, b;
	rp_start(&a, "marie", "customer-care-assistant", "BIKAROO_THREADS=10");
	rp_start(&b, "olivia", "ops-assistant", "BIKAROO_THREADS=10");
	enum { N = 20 };
	pthread_t t[N];
	struct rp_racer r[N];
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, N);
	const char *bike = "VL-2132";
	/* The counts below are of this test's rows (since), whatever the bike's earlier reports
	 * and cases; the bike must be in service for its status to move. */
	char *since = rp_now();
	char *before = rp_sql("SELECT status FROM fleet.bikes WHERE bike_id = '%s'", bike);
	ck_assert_msg(strcmp(before, "available") == 0 || strcmp(before, "unavailable") == 0,
		      "%s is %s: the test needs a bike in service", bike, before);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++) {
		r[i] = (struct rp_racer){.port = i % 2 ? b.port : a.port, .n = i, .go = &go};
		pthread_create(&t[i], NULL, rp_race, &r[i]);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_barrier_destroy(&go);
	fprintf(stderr, "twenty_concurrent_reports: %d reports in %.1f ms\n", N,
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	for (int i = 0; i < N; i++) {
		ck_assert_msg(r[i].ok, "report %d failed: %s", i, r[i].failure);
		ck_assert_str_eq(r[i].case_id, r[0].case_id);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(r[i].report, r[j].report);
	}
	ck_assert_int_eq(
		rp_count("SELECT count(*) FROM fleet.cases WHERE bike_id = '%s' AND state = 'open'",
			 bike),
		1);
	char *open_case = rp_sql("SELECT case_id FROM fleet.cases WHERE bike_id = '%s'"
				 " AND state = 'open'",
				 bike);
	ck_assert_str_eq(open_case, r[0].case_id);
	free(open_case);
	/* Its report_count counts every report it holds. */
	ck_assert_int_eq(rp_count("SELECT report_count - (SELECT count(*) FROM fleet.damage_reports"
				  " d WHERE d.case_id = c.case_id) FROM fleet.cases c"
				  " WHERE case_id = '%s'",
				  r[0].case_id),
			 0);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '%s'"
				  " AND recorded_at >= '%s'",
				  bike, since),
			 N);
	/* The open case holds the N reports (and those it held before, if it was open). */
	long opened = rp_count("SELECT count(*) FROM fleet.cases WHERE case_id = '%s'"
			       " AND opened_at >= '%s'",
			       r[0].case_id, since);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE case_id = '%s'"
				  " AND recorded_at >= '%s'",
				  r[0].case_id, since),
			 N);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.case_events WHERE case_id = '%s'"
				  " AND at >= '%s'",
				  r[0].case_id, since),
			 N + opened);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.bike_status_history"
				  " WHERE bike_id = '%s' AND changed_at >= '%s'",
				  bike, since),
			 N);
	/* At most one history row moved the bike (one if it was available); every later one saw
	 * it unavailable. */
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.bike_status_history"
				  " WHERE bike_id = '%s' AND status_from <> status_to"
				  " AND changed_at >= '%s'",
				  bike, since),
			 strcmp(before, "available") == 0);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE target = '%s'"
				  " AND tool = 'report_damaged_bike'"
				  " AND outcome = 'ok' AND at >= '%s'",
				  bike, since),
			 N);
	free(before);
	free(since);
	char *st = rp_sql("SELECT status FROM fleet.bikes WHERE bike_id = '%s'", bike);
	ck_assert_str_eq(st, "unavailable");
	free(st);
	ck_assert_int_eq(it_server_stop(&a), 0);
	ck_assert_int_eq(it_server_stop(&b), 0);
}
END_TEST

/* ---- a server killed in the middle of reports ------------------------------------------------ */

struct rp_loop {
	unsigned port;
	volatile int stop;
	int sent, ok;
};

static void *rp_loop_run(void *p)
{
	struct rp_loop *l = p;
	json_t *args = json_pack("{s:s, s:s}", "bikeId", "VL-2135", "issue", "battery_fault");
	while (!l->stop && l->sent < 5000) {
		struct it_response r;
		l->sent++;
		rp_call_ex(l->port, args, RP_CAPS_NONE, "", l->sent, &r);
		if (r.status == 200 &&
		    json_is_false(json_object_get(json_object_get(r.json, "result"), "isError")))
			__atomic_add_fetch(&l->ok, 1, __ATOMIC_RELAXED);
		if (r.status < 0)
			l->stop = 1;
		it_response_free(&r);
	}
	json_decref(args);
	return NULL;
}

START_TEST(killed_server_leaves_no_partial_report)
{
	struct it_server s;
	rp_start(&s, "olivia", "ops-assistant", NULL);
	/* The counts below are of this test's rows, whatever the bike's earlier ones. */
	char *since = rp_now();
	enum { LOOPS = 4 };
	struct rp_loop l[LOOPS];
	pthread_t t[LOOPS];
	for (int i = 0; i < LOOPS; i++) {
		l[i] = (struct rp_loop){.port = s.port};
		pthread_create(&t[i], NULL, rp_loop_run, &l[i]);
	}
	/* Kill in the middle of the loop: once reports are being answered (bounded wait: a cold
	 * machine may take a while for the first one), and a moment later. */
	struct timespec pause = {0, 200 * 1000 * 1000}, tick = {0, 10 * 1000 * 1000};
	for (int waited = 0; waited < 3000; waited++) {
		int answered = 0;
		for (int i = 0; i < LOOPS; i++)
			answered += __atomic_load_n(&l[i].ok, __ATOMIC_RELAXED);
		if (answered > 0)
			break;
		nanosleep(&tick, NULL);
	}
	nanosleep(&pause, NULL);
	kill(s.pid, SIGKILL);
	waitpid(s.pid, NULL, 0);
	s.pid = 0;
	int ok = 0, sent = 0;
	for (int i = 0; i < LOOPS; i++) {
		l[i].stop = 1;
		pthread_join(t[i], NULL);
		ok += l[i].ok;
		sent += l[i].sent;
	}
	fprintf(stderr, "killed_server: %d reports answered, %d sent before kill -9\n", ok, sent);
	ck_assert_int_gt(ok, 0);
	/* The killed server's backends finish the statements they had received (each commits or
	 * rolls back as a whole; one may still be unread in the socket while its backend shows
	 * idle) and exit when they find the client gone: wait until none is left. */
	for (int waited = 0; waited < 1000; waited++) {
		if (rp_count("SELECT count(*) FROM pg_stat_activity WHERE usename = 'fleet_app'") ==
		    0)
			break;
		nanosleep(&tick, NULL);
	}
	const char *bike = "VL-2135";
	long reports = rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '%s'"
				" AND recorded_at >= '%s'",
				bike, since);
	ck_assert_int_ge(reports, ok);
	ck_assert_int_le(reports, sent);
	/* Every committed report has all of its rows; no row exists without its report. */
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports r WHERE bike_id = '%s'"
				  " AND (NOT EXISTS (SELECT 1 FROM fleet.case_events e"
				  "   WHERE e.report_id = r.report_id AND e.kind = 'report_added')"
				  " OR NOT EXISTS (SELECT 1 FROM fleet.bike_status_history h"
				  "   WHERE h.report_id = r.report_id)"
				  " OR NOT EXISTS (SELECT 1 FROM fleet.audit_log a"
				  "   WHERE a.report_id = r.report_id AND a.outcome = 'ok'))"
				  " AND recorded_at >= '%s'",
				  bike, since),
			 0);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.bike_status_history"
				  " WHERE bike_id = '%s' AND changed_at >= '%s'",
				  bike, since),
			 reports);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE target = '%s'"
				  " AND tool = 'report_damaged_bike'"
				  " AND outcome = 'ok' AND at >= '%s'",
				  bike, since),
			 reports);
	ck_assert_int_eq(
		rp_count("SELECT count(*) FROM fleet.cases WHERE bike_id = '%s' AND state = 'open'",
			 bike),
		1);
	/* Each of the bike's cases counts every report it holds. */
	ck_assert_int_eq(rp_count("SELECT sum(report_count) - (SELECT count(*) FROM"
				  " fleet.damage_reports WHERE bike_id = '%s') FROM fleet.cases"
				  " WHERE bike_id = '%s'",
				  bike, bike),
			 0);
	char *st = rp_sql("SELECT status FROM fleet.bikes WHERE bike_id = '%s'", bike);
	ck_assert_str_eq(st, "unavailable");
	free(st);
	free(since);
	/* A new server carries on from the durable state. */
	rp_start(&s, "olivia", "ops-assistant", NULL);
	json_t *args = rp_args(bike, "battery_fault");
	struct it_response r;
	json_t *res = rp_call(s.port, args, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- the audit log --------------------------------------------------------------------------- */

START_TEST(every_tools_call_leaves_an_audit_row)
{
	struct it_server s;
	rp_start(&s, "marie", "customer-care-assistant", NULL);
	long before =
		rp_count("SELECT count(*) FROM fleet.audit_log WHERE subject = '%s'", "marie");
	struct it_response r;
	json_t *missing = json_pack("{s:s}", "bikeId", "VL-2138");
	json_t *res = rp_call(s.port, missing, &r);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	it_response_free(&r);
	json_t *extra =
		json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2138", "issue", "other", "foo", "bar");
	res = rp_call(s.port, extra, &r);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	it_response_free(&r);
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2138\"}", &r);
	it_response_free(&r);
	it_mcp(s.port, "tools/call", "no_such_tool", "\"name\":\"no_such_tool\",\"arguments\":{}",
	       &r);
	it_response_free(&r);
	long after = rp_count("SELECT count(*) FROM fleet.audit_log WHERE subject = '%s'", "marie");
	ck_assert_int_eq(after - before, 4);
	char *v = it_sql("SELECT string_agg(tool || ':' || outcome, ',' ORDER BY audit_id) FROM"
			 " (SELECT * FROM fleet.audit_log WHERE subject = 'marie'"
			 "  ORDER BY audit_id DESC LIMIT 4) x");
	ck_assert_str_eq(v, "report_damaged_bike:invalid,report_damaged_bike:invalid,"
			    "get_bike_status:ok,no_such_tool:invalid");
	free(v);
	/* The digest is SHA-256 of the canonical arguments, never the arguments or a token. */
	v = it_sql("SELECT args_digest FROM fleet.audit_log WHERE subject = 'marie'"
		   " AND tool = 'get_bike_status' ORDER BY audit_id DESC LIMIT 1");
	char *want = it_sql("SELECT encode(sha256(convert_to('{\"bikeId\":\"VL-2138\"}', 'UTF8')),"
			    " 'hex')");
	ck_assert_str_eq(v, want);
	free(v);
	free(want);
	json_decref(missing);
	json_decref(extra);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- server-side confirmation (the full flow with the official client is in tests/e2e) --- */

START_TEST(confirmation_needs_elicitation_and_writes_nothing_until_accepted)
{
	struct it_server s;
	rp_start(&s, "marie", "careful-assistant", NULL);
	char *snap = rp_snapshot();
	json_t *args = rp_args("VL-2141", "flat_tire");
	struct it_response r;
	/* No elicitation capability declared: -32021 naming it, HTTP 400. */
	rp_call_ex(s.port, args, RP_CAPS_NONE, "", 1, &r);
	ck_assert_int_eq(r.status, 400);
	json_t *e = json_object_get(r.json, "error");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")), -32021);
	ck_assert(json_is_object(
		json_object_get(json_object_get(json_object_get(e, "data"), "requiredCapabilities"),
				"elicitation")));
	it_response_free(&r);
	/* Declared: input_required with the form, no ttlMs/cacheScope. */
	rp_call_ex(s.port, args, RP_CAPS_ELICIT, "", 2, &r);
	ck_assert_int_eq(r.status, 200);
	json_t *res = json_object_get(r.json, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "input_required");
	ck_assert_ptr_null(json_object_get(res, "ttlMs"));
	ck_assert_ptr_null(json_object_get(res, "cacheScope"));
	json_t *ask = json_object_get(json_object_get(res, "inputRequests"), "confirm");
	ck_assert_str_eq(json_string_value(json_object_get(ask, "method")), "elicitation/create");
	const char *msg =
		json_string_value(json_object_get(json_object_get(ask, "params"), "message"));
	/* In the user's words: the bike, its region by name, what happens; never the tool, a
	 * subject or a client id. */
	ck_assert_msg(strstr(msg, "VL-2141") && strstr(msg, "unavailable") &&
			      strstr(msg, "(Paris)") && !strstr(msg, "report_damaged_bike") &&
			      !strstr(msg, "marie") && !strstr(msg, "careful-assistant"),
		      "%s", msg);
	char *state = mem_strdup(json_string_value(json_object_get(res, "requestState")));
	it_response_free(&r);
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	/* The same state with other arguments is refused. */
	char *extra = mem_printf("\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":{"
				 "\"action\":\"accept\",\"content\":{\"confirm\":true}}},",
				 state);
	json_t *other = rp_args("VL-2141", "frame_damage");
	rp_call_ex(s.port, other, RP_CAPS_ELICIT, extra, 3, &r);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(r.json, "error"), "code")),
		-32602);
	it_response_free(&r);
	/* Accepted: written once, even when the accepted retry is replayed. */
	rp_call_ex(s.port, args, RP_CAPS_ELICIT, extra, 4, &r);
	res = json_object_get(r.json, "result");
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	char *report = mem_strdup(rp_sc(res, "reportId"));
	it_response_free(&r);
	rp_call_ex(s.port, args, RP_CAPS_ELICIT, extra, 5, &r);
	ck_assert_str_eq(rp_sc(json_object_get(r.json, "result"), "reportId"), report);
	it_response_free(&r);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '%s'",
				  "VL-2141"),
			 1);
	/* A 2025-era client cannot be asked: a tool error, nothing written. */
	const char *legacy =
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
		"\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"VL-2141\","
		"\"issue\":\"flat_tire\"}}}";
	const char *lh[] = {"Content-Type: application/json",
			    "Accept: application/json, text/event-stream", NULL};
	it_http(s.port, "POST", "/mcp", lh, legacy, strlen(legacy), &r);
	res = json_object_get(r.json, "result");
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_ptr_nonnull(strstr(rp_text(res), "confirm"));
	it_response_free(&r);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '%s'",
				  "VL-2141"),
			 1);
	free(report);
	free(extra);
	free(state);
	free(snap);
	json_decref(other);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* A confirmation is bound to the bike as its question showed it: when another report changed
 * the bike's status and opened its case meanwhile, the user's yes files nothing; they are told
 * what changed and asked about the bike as it stands, and that answer files once. */
START_TEST(an_answer_to_a_question_about_another_state_of_the_bike_is_asked_again)
{
	free(rp_sql("DELETE FROM fleet.case_events WHERE case_id IN (SELECT case_id FROM "
		    "fleet.cases WHERE bike_id = 'VL-2146');"
		    "DELETE FROM fleet.bike_status_history WHERE bike_id = 'VL-2146';"
		    "DELETE FROM fleet.damage_reports WHERE bike_id = 'VL-2146';"
		    "DELETE FROM fleet.cases WHERE bike_id = 'VL-2146';"
		    "UPDATE fleet.bikes SET region = 'FR-PAR', status = 'available' WHERE bike_id "
		    "= 'VL-2146'"));
	struct it_server s;
	rp_start(&s, "marie", "careful-assistant", NULL);
	const char *args = "{\"bikeId\":\"VL-2146\",\"issue\":\"flat_tire\"}";
	char *question = NULL;
	char *state = it_tool_ask(s.port, "report_damaged_bike", args, &question);
	ck_assert_msg(strstr(question, "becomes unavailable") &&
			      strstr(question, "new investigation"),
		      "%s", question);
	free(question);
	/* Meanwhile olivia reports the bike (her application does not ask). */
	char *other = it_sql_as_app(
		"SELECT outcome || ' ' || (result ->> 'case_id') FROM "
		"fleet.report_damaged_bike_as(("
		"'olivia', 'ops-assistant', '{\"bikeId\": \"VL-2146\", \"issue\": "
		"\"brake_failure\"}', "
		"'report_damaged_bike', NULL, repeat('c', 64), 'it-report-meanwhile', false, "
		"'VL-2146', NULL, NULL, NULL)::fleet.write_call)");
	ck_assert_msg(other && strncmp(other, "ok IC-", 6) == 0, "%s", other ? other : "(refused)");
	const char *case_id = other + 3;
	char *snap = rp_snapshot();
	struct it_response r;
	json_t *res = it_tool_answer(s.port, "report_damaged_bike", args, state, true, &r);
	ck_assert_msg(json_is_string(json_object_get(res, "resultType")) &&
			      strcmp(json_string_value(json_object_get(res, "resultType")),
				     "input_required") == 0,
		      "an answer about another state of the bike: %s", r.body);
	const char *q = json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(res, "inputRequests"), "confirm"),
				"params"),
		"message"));
	char *said = mem_printf("Since you were asked, bike VL-2146 became unavailable (it was "
				"available) and case %s was opened for it.",
				case_id);
	ck_assert_msg(q && strncmp(q, said, strlen(said)) == 0 && strstr(q, "stays unavailable") &&
			      strstr(q, "added to case"),
		      "want \"%s\" then the question as the bike stands: %s", said, r.body);
	free(said);
	char *fresh = mem_strdup(json_string_value(json_object_get(res, "requestState")));
	it_response_free(&r);
	char *snap2 = rp_snapshot();
	ck_assert_str_eq(snap, snap2); /* nothing filed */
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE tool = "
				  "'report_damaged_bike' AND target = 'VL-2146' AND subject = "
				  "'marie' AND outcome = 'conflict'"),
			 1);
	/* The question as the bike stands, answered: filed once, into the case opened meanwhile. */
	res = it_tool_answer(s.port, "report_damaged_bike", args, fresh, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(rp_sc(res, "caseId"), case_id);
	it_response_free(&r);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = "
				  "'VL-2146' AND reported_by = 'marie'"),
			 1);
	ck_assert_int_eq(rp_count("SELECT count(*) FROM fleet.audit_log WHERE tool = "
				  "'report_damaged_bike' AND target = 'VL-2146' AND subject = "
				  "'marie' AND outcome = 'ok'"),
			 1);
	free(snap2);
	free(snap);
	free(fresh);
	free(other);
	free(state);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- the case read (domain function and resource content, directly) ------------------------- */

START_TEST(case_read_follows_perimeter_and_role)
{
	/* A case opened by olivia on a FR-PAR bike, with marie reporting into another one. */
	struct it_server o;
	rp_start(&o, "olivia", "ops-assistant", NULL);
	json_t *args = json_pack("{s:s, s:s, s:s}", "bikeId", "VL-2144", "issue", "frame_damage",
				 "description", "Crack near the seat post");
	struct it_response r;
	json_t *res = rp_call(o.port, args, &r);
	char *case_id = mem_strdup(rp_sc(res, "caseId"));
	char *report = mem_strdup(rp_sc(res, "reportId"));
	it_response_free(&r);
	json_decref(args);
	/* The resource content built from it, through resources/read. */
	char uri[96], params[128];
	snprintf(uri, sizeof uri, "bikaroo://cases/%s", case_id);
	snprintf(params, sizeof params, "\"uri\":\"%s\"", uri);
	it_mcp(o.port, "resources/read", uri, params, &r);
	json_t *item =
		json_array_get(json_object_get(json_object_get(r.json, "result"), "contents"), 0);
	ck_assert_msg(item != NULL, "%s", r.body);
	ck_assert_str_eq(json_string_value(json_object_get(item, "mimeType")), "application/json");
	json_error_t je;
	json_t *body = json_loads(json_string_value(json_object_get(item, "text")), 0, &je);
	ck_assert_str_eq(json_string_value(json_object_get(body, "caseId")), case_id);
	ck_assert_uint_eq(json_array_size(json_object_get(body, "reports")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(body, "events")), 2);
	/* Beside each code and id, the name PostgreSQL holds for it. */
	char *olivia_name =
		it_sql("SELECT display_name FROM fleet.principals WHERE subject = 'olivia'");
	char *app_name =
		it_sql("SELECT name FROM fleet.client_apps WHERE client_id = 'ops-assistant'");
	char *region_name = it_sql("SELECT r.name FROM fleet.regions r JOIN fleet.bikes b "
				   "ON b.region = r.code WHERE b.bike_id = 'VL-2144'");
	ck_assert_str_eq(json_string_value(json_object_get(body, "regionName")), region_name);
	ck_assert_str_eq(json_string_value(json_object_get(body, "openedByName")), olivia_name);
	ck_assert_str_eq(json_string_value(json_object_get(body, "openedViaName")), app_name);
	json_t *rep0 = json_array_get(json_object_get(body, "reports"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(rep0, "reportedByName")), olivia_name);
	ck_assert_str_eq(json_string_value(json_object_get(rep0, "clientName")), app_name);
	for (size_t i = 0; i < 2; i++) {
		json_t *ev = json_array_get(json_object_get(body, "events"), i);
		ck_assert_str_eq(json_string_value(json_object_get(ev, "subjectName")),
				 olivia_name);
		ck_assert_str_eq(json_string_value(json_object_get(ev, "clientName")), app_name);
	}
	free(olivia_name);
	free(app_name);
	free(region_name);
	json_decref(body);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&o), 0);
	/* The names come through a SECURITY DEFINER function (the login role reads only its own
	 * principal and client rows): it names no one of a case outside the perimeter the
	 * transaction fixed, nor outside a transaction that fixed one. */
	char *sql = mem_printf("SELECT count(*) FROM fleet.case_names('%s')", case_id);
	char *outside = it_sql_as_app_then(
		"BEGIN; SELECT fleet.act_as('paul', 'customer-care-assistant')", sql);
	char *no_identity = it_sql_as_app(sql);
	char *inside =
		it_sql_as_app_then("BEGIN; SELECT fleet.act_as('olivia', 'ops-assistant')", sql);
	ck_assert_str_eq(outside, "0");
	ck_assert_str_eq(no_identity, "0");
	ck_assert_str_eq(inside, "2"); /* olivia and ops-assistant */
	free(outside);
	free(no_identity);
	free(inside);
	free(sql);

	/* The read itself, as each caller: olivia (fleet operator of the region) sees the case,
	 * its report (with its description) and its two events in order; marie (customer care,
	 * not involved), paul (another region) and an unknown case read alike: nothing. */
	char *q =
		mem_printf("SELECT fleet.act_as('olivia', 'ops-assistant');"
			   "SELECT bike_id || ' ' || state || ' ' || opened_by || ' ' || "
			   "json_array_length(reports) || ' ' || json_array_length(events) || "
			   "' ' || (reports->0->>'description') || ' ' || (events->0->>'type') || "
			   "' ' || (events->1->>'type') || ' ' || (events->1->>'reportId') "
			   "FROM fleet.case_for(ARRAY['%s'])",
			   case_id);
	char *seen = it_sql_as_app(q);
	free(q);
	char *want = mem_printf("VL-2144 open olivia 1 2 Crack near the seat post opened "
				"report_added %s",
				report);
	ck_assert_str_eq(seen, want);
	free(seen);
	free(want);
	static const char *const unseen[][3] = {{"marie", "customer-care-assistant", ""},
						{"paul", "customer-care-assistant", ""},
						{"olivia", "ops-assistant", "IC-99999999"}};
	for (size_t i = 0; i < 3; i++) {
		q = mem_printf("SELECT fleet.act_as('%s', '%s');"
			       "SELECT count(*) FROM fleet.case_for(ARRAY['%s'])",
			       unseen[i][0], unseen[i][1], *unseen[i][2] ? unseen[i][2] : case_id);
		char *n = it_sql_as_app(q);
		ck_assert_str_eq(n, "0");
		free(n);
		free(q);
	}
	struct it_server p;
	rp_start(&p, "paul", "customer-care-assistant", NULL);
	it_mcp(p.port, "resources/read", uri, params, &r);
	json_t *e = json_object_get(r.json, "error");
	ck_assert_msg(e != NULL, "%s", r.body);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")), MCP_INVALID_PARAMS);
	ck_assert_str_eq(json_string_value(json_object_get(e, "message")), "Resource not found");
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&p), 0);
	/* Once marie reports into the case, she sees it. */
	struct it_server m;
	rp_start(&m, "marie", "customer-care-assistant", NULL);
	args = rp_args("VL-2144", "frame_damage");
	res = rp_call(m.port, args, &r);
	ck_assert_str_eq(rp_sc(res, "caseId"), case_id);
	it_response_free(&r);
	json_decref(args);
	ck_assert_int_eq(it_server_stop(&m), 0);
	q = mem_printf("SELECT fleet.act_as('marie', 'customer-care-assistant');"
		       "SELECT json_array_length(reports) + json_array_length(events) FROM "
		       "fleet.case_for(ARRAY['%s'])",
		       case_id);
	char *five = it_sql_as_app(q);
	ck_assert_str_eq(five, "5");
	free(five);
	free(q);
	free(case_id);
	free(report);
}
END_TEST

CHECK_SUITE(report)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report_damaged_bike");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, tools_list_describes_report_damaged_bike);
	tcase_add_test(tc, report_writes_everything_in_one_transaction);
	tcase_add_test(tc, out_of_service_bike_keeps_its_status);
	tcase_add_test(tc, idempotency_key_replays_and_refuses_other_arguments);
	tcase_add_test(tc, a_result_the_declaration_does_not_describe_is_never_answered);
	tcase_add_test(tc, other_region_is_refused_and_nothing_is_written);
	tcase_add_loop_test(tc, viewer_readonly_client_and_machine_cannot_report, 0,
			    RP_NREFUSED + 1);
	tcase_add_test(tc, rls_refuses_writes_outside_the_function);
	tcase_add_test(tc, case_id_must_be_open_visible_and_for_this_bike);
	tcase_add_test(tc, description_limit_is_2000_characters);
	tcase_add_test(tc, idempotency_key_limit_is_200_characters);
	tcase_add_test(tc, sql_metacharacters_are_stored_literally);
	tcase_add_test(tc, twenty_concurrent_reports_on_one_bike);
	tcase_add_test(tc, killed_server_leaves_no_partial_report);
	tcase_add_test(tc, every_tools_call_leaves_an_audit_row);
	tcase_add_test(tc, confirmation_needs_elicitation_and_writes_nothing_until_accepted);
	tcase_add_test(tc, an_answer_to_a_question_about_another_state_of_the_bike_is_asked_again);
	tcase_add_test(tc, case_read_follows_perimeter_and_role);
	suite_add_tcase(s, tc);
	return s;
}
