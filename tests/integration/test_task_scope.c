/* Integration tests of the task methods' scope, with real access tokens of the test authorization
 * server: a task is guarded by the scope of the tool whose call created it. marie's inspection
 * request (request_inspection, fleet:report) is answered as a task; her tokens scoped only
 * `openid` or only `fleet:read` get, from tasks/get, tasks/cancel and a listen naming it, exactly
 * what an id never issued is answered (same HTTP status, same error body), nothing is withdrawn,
 * and each refusal leaves its audit row; her full token reads and cancels it. The task suggests a
 * poll every 5 s. */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define TS_BIKE "VL-990301"
#define TS_CAPS "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
#define TS_UNKNOWN "00000000-0000-4000-8000-00000000c0de"

enum { TS_FULL, TS_READ, TS_OPENID, TS_NTOKENS };
static const char *const ts_grant[TS_NTOKENS][3] = {
	[TS_FULL] = {"marie", "customer-care-assistant", "openid fleet:read fleet:report"},
	[TS_READ] = {"marie", "customer-care-assistant", "fleet:read"},
	[TS_OPENID] = {"marie", "customer-care-assistant", "openid"},
};
static char *ts_token[TS_NTOKENS];
static struct it_as ts_as;
static struct it_server ts_srv;
static int ts_seq;

static void ts_setup(void)
{
	it_as_start(&ts_as, "jwt");
	for (int i = 0; i < TS_NTOKENS; i++) {
		ts_token[i] = it_as_mint(&ts_as, ts_grant[i][0], ts_grant[i][1], ts_grant[i][2]);
		ck_assert_ptr_nonnull(ts_token[i]);
	}
	char issuer[160];
	snprintf(issuer, sizeof issuer, "BIKAROO_AUTH_ISSUER=%s", ts_as.issuer);
	const char *env[] = {"BIKAROO_AUTH=jwt", issuer, "BIKAROO_RESOURCE_URI=" IT_AS_RESOURCE,
			     "BIKAROO_AUTH_INSECURE_LOOPBACK=1", NULL};
	ck_assert_int_eq(it_server_start(&ts_srv, env), 0);
}

static void ts_teardown(void)
{
	ck_assert_int_eq(it_server_stop(&ts_srv), 0);
	it_as_stop(&ts_as);
	for (int i = 0; i < TS_NTOKENS; i++)
		free(ts_token[i]);
}

/* The superuser's first value of sql (new string); fails the test when refused. */
static char *ts_sql(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	return v;
}

/* A 2026-07-28 request with token tok declaring the extension; its JSON-RPC id "ts-PID-N" into
 * id. */
static void ts_rpc(int tok, const char *method, const char *name, const char *params, char id[64],
		   struct it_response *r)
{
	snprintf(id, 64, "ts-%d-%d", (int)getpid(), ++ts_seq);
	char mh[64], nh[160], auth[2048];
	snprintf(mh, sizeof mh, "Mcp-Method: %s", method);
	snprintf(nh, sizeof nh, "Mcp-Name: %s", name);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", ts_token[tok]);
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 mh,
				 nh,
				 auth,
				 NULL};
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"%s\",\"params\":{%s,\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":" TS_CAPS "}}}",
		id, method, params);
	it_http(ts_srv.port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
}

/* tools/call of tool with args (a JSON object's text) as tok: its result (new). */
static json_t *ts_tool(int tok, const char *tool, const char *args)
{
	char *params = mem_printf("\"name\":\"%s\",\"arguments\":%s", tool, args);
	char id[64];
	struct it_response r;
	ts_rpc(tok, "tools/call", tool, params, id, &r);
	free(params);
	json_t *res = json_incref(json_object_get(r.json, "result"));
	ck_assert_msg(res && !json_is_true(json_object_get(res, "isError")), "%s: HTTP %ld %s",
		      tool, r.status, r.body);
	it_response_free(&r);
	return res;
}

/* A fresh case on TS_BIKE reported by marie, and her inspection request answered as a task:
 * the task's id into task (new), the case's id returned (new). */
static char *ts_task(char **task)
{
	free(ts_sql("DELETE FROM fleet.tasks WHERE case_id IN (SELECT case_id FROM fleet.cases "
		    "WHERE bike_id = '" TS_BIKE "');"
		    "DELETE FROM fleet.case_events WHERE case_id IN (SELECT case_id FROM "
		    "fleet.cases WHERE bike_id = '" TS_BIKE "');"
		    "DELETE FROM fleet.idempotency_keys WHERE report_id IN (SELECT report_id FROM "
		    "fleet.damage_reports WHERE bike_id = '" TS_BIKE "');"
		    "DELETE FROM fleet.bike_status_history WHERE bike_id = '" TS_BIKE "';"
		    "DELETE FROM fleet.damage_reports WHERE bike_id = '" TS_BIKE "';"
		    "DELETE FROM fleet.cases WHERE bike_id = '" TS_BIKE "';"
		    "INSERT INTO fleet.bikes (bike_id, region, status, battery_pct, last_seen_at) "
		    "VALUES ('" TS_BIKE "', 'FR-PAR', 'available', 90, now()) "
		    "ON CONFLICT (bike_id) DO UPDATE SET status = 'available'"));
	json_t *res = ts_tool(TS_FULL, "report_damaged_bike",
			      "{\"bikeId\":\"" TS_BIKE "\",\"issue\":\"brake_failure\"}");
	char *c = mem_strdup(json_string_value(
		json_object_get(json_object_get(res, "structuredContent"), "caseId")));
	json_decref(res);
	char args[96];
	snprintf(args, sizeof args, "{\"caseId\":\"%s\"}", c);
	res = ts_tool(TS_FULL, "request_inspection", args);
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "task");
	*task = mem_strdup(json_string_value(json_object_get(res, "taskId")));
	json_decref(res);
	return c;
}

/* tasks/METHOD of task as tok: HTTP status and the response without its id (new), and the
 * request's JSON-RPC id into id. */
static json_t *ts_task_call(int tok, const char *method, const char *task, long *status,
			    char id[64])
{
	char params[192];
	snprintf(params, sizeof params, "\"taskId\":\"%s\"", task);
	struct it_response r;
	ts_rpc(tok, method, task, params, id, &r);
	*status = r.status;
	json_t *j = json_incref(r.json);
	ck_assert_msg(j != NULL, "%s: HTTP %ld %s", method, r.status, r.body);
	json_object_del(j, "id");
	it_response_free(&r);
	return j;
}

/* The audit rows of the request with JSON-RPC id: "tool outcome detail" of each, in order. */
static char *ts_audited(const char *id)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT coalesce(string_agg(tool || ' ' || outcome || ' ' || "
		 "coalesce(detail, '-'), ';' ORDER BY audit_id), '') FROM fleet.audit_log "
		 "WHERE subject = 'marie' AND request_id LIKE '%%\"%s\"'",
		 id);
	return ts_sql(sql);
}

static void ts_expect(const char *want, const char *sql)
{
	char *v = ts_sql(sql);
	ck_assert_msg(strcmp(v, want) == 0, "%s: got %s, want %s", sql, v, want);
	free(v);
}

START_TEST(a_task_needs_the_scope_of_the_tool_that_made_it)
{
	char *task, *c = ts_task(&task);
	static const int refused[] = {TS_OPENID, TS_READ};
	static const char *const methods[] = {"tasks/get", "tasks/cancel"};
	for (size_t m = 0; m < 2; m++)
		for (size_t k = 0; k < 2; k++) {
			long st_unknown, st;
			char id_unknown[64], id[64];
			json_t *unknown = ts_task_call(refused[k], methods[m], TS_UNKNOWN,
						       &st_unknown, id_unknown);
			json_t *got = ts_task_call(refused[k], methods[m], task, &st, id);
			char *a = json_dumps(unknown, JSON_SORT_KEYS),
			     *b = json_dumps(got, JSON_SORT_KEYS);
			ck_assert_msg(
				st == st_unknown && strcmp(a, b) == 0,
				"%s with %s: HTTP %ld %s, where an unknown id gets HTTP %ld %s",
				methods[m], ts_grant[refused[k]][2], st, b, st_unknown, a);
			ck_assert_int_eq(json_integer_value(json_object_get(
						 json_object_get(got, "error"), "code")),
					 -32602);
			free(a);
			free(b);
			json_decref(unknown);
			json_decref(got);
			/* Both refusals audited as a refused read is. */
			char want[128];
			snprintf(want, sizeof want, "%s not_found -", methods[m]);
			char *rows = ts_audited(id_unknown);
			ck_assert_str_eq(rows, want);
			free(rows);
			snprintf(want, sizeof want, "%s denied fleet:report", methods[m]);
			rows = ts_audited(id);
			ck_assert_str_eq(rows, want);
			free(rows);
		}
	/* Nothing was withdrawn. */
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	ts_expect("inspection_requested", sql);
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM fleet.case_events WHERE case_id = '%s' AND kind = "
		 "'inspection_cancelled'",
		 c);
	ts_expect("0", sql);
	/* The full token reads it (a poll every 5 s suggested) and withdraws it. */
	long st;
	char id[64];
	json_t *got = ts_task_call(TS_FULL, "tasks/get", task, &st, id);
	json_t *r = json_object_get(got, "result");
	ck_assert_msg(r != NULL, "HTTP %ld", st);
	ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "working");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "pollIntervalMs")), 5000);
	json_decref(got);
	got = ts_task_call(TS_FULL, "tasks/cancel", task, &st, id);
	ck_assert_ptr_nonnull(json_object_get(got, "result"));
	json_decref(got);
	snprintf(sql, sizeof sql, "SELECT state FROM fleet.cases WHERE case_id = '%s'", c);
	ts_expect("open", sql);
	free(task);
	free(c);
}
END_TEST

/* One listen of a token naming a task, held for at most ms: what the stream carried (new). */
struct ts_listen {
	char *got;
	size_t len;
};

static size_t ts_listen_write(char *p, size_t size, size_t n, void *arg)
{
	struct ts_listen *l = arg;
	l->got = mem_realloc(l->got, l->len + size * n + 1);
	memcpy(l->got + l->len, p, size * n);
	l->len += size * n;
	l->got[l->len] = '\0';
	return size * n;
}

static char *ts_listen(int tok, const char *task, long ms)
{
	char url[64], auth[2048];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", ts_srv.port);
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", ts_token[tok]);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
	h = curl_slist_append(h, "Mcp-Method: subscriptions/listen");
	h = curl_slist_append(h, auth);
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"ts-listen\",\"method\":\"subscriptions/listen\","
		"\"params\":{\"notifications\":{\"taskIds\":[\"%s\"]},\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":" TS_CAPS "}}}",
		task);
	struct ts_listen l = {0};
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_listen_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &l);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms); /* the stream stays open: cut it then */
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	free(body);
	return l.got ? l.got : mem_strdup("");
}

START_TEST(a_listen_names_a_task_only_to_a_token_with_its_scope)
{
	char *task, *c = ts_task(&task);
	static const int refused[] = {TS_OPENID, TS_READ};
	for (size_t k = 0; k < 2; k++) {
		char *got = ts_listen(refused[k], task, 1500);
		ck_assert_msg(strstr(got, "notifications/subscriptions/acknowledged") &&
				      !strstr(got, task),
			      "%s: %s", ts_grant[refused[k]][2], got);
		free(got);
	}
	char sql[256];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM fleet.audit_log WHERE subject = 'marie' AND tool = "
		 "'subscriptions/listen' AND outcome = 'denied' AND detail = 'fleet:report' AND "
		 "at > now() - interval '1 minute'");
	char *n = ts_sql(sql);
	ck_assert_int_ge(strtol(n, NULL, 10), 2);
	free(n);
	char *got = ts_listen(TS_FULL, task, 1500);
	ck_assert_msg(strstr(got, task), "%s", got);
	free(got);
	free(task);
	free(c);
}
END_TEST

CHECK_SUITE(task_scope)
{
	Suite *s = suite_create("task_scope");
	TCase *tc = tcase_create("task_scope");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, ts_setup, ts_teardown);
	tcase_add_test(tc, a_task_needs_the_scope_of_the_tool_that_made_it);
	tcase_add_test(tc, a_listen_names_a_task_only_to_a_token_with_its_scope);
	suite_add_tcase(s, tc);
	return s;
}
