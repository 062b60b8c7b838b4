/* Integration tests of the running server: get_bike_status over MCP, the perimeter in C and
 * in PostgreSQL, start-up refusals, migrations, body limits. */
#define _GNU_SOURCE /* for strcasestr */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

static struct it_server srv;

static void srv_setup(void)
{
	ck_assert_int_eq(it_server_start(&srv, NULL), 0);
}

static void srv_teardown(void)
{
	ck_assert_int_eq(it_server_stop(&srv), 0);
}

static json_t *call_bike(unsigned port, const char *bike, struct it_response *r)
{
	char params[256];
	snprintf(params, sizeof params,
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"%s\"}", bike);
	it_mcp(port, "tools/call", "get_bike_status", params, r);
	ck_assert_msg(r->status == 200, "status %ld: %s", r->status, r->body);
	return json_object_get(r->json, "result");
}

static const char *first_text(json_t *result)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
}

START_TEST(bike_status_in_perimeter)
{
	struct it_response r;
	json_t *res = call_bike(srv.port, "VL-2048", &r);
	ck_assert(json_is_false(json_object_get(res, "isError")));
	json_t *sc = json_object_get(res, "structuredContent");
	ck_assert_str_eq(json_string_value(json_object_get(sc, "bikeId")), "VL-2048");
	ck_assert_str_eq(json_string_value(json_object_get(sc, "region")), "FR-PAR");
	/* The answer is what PostgreSQL holds, not a constant. */
	char *status = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2048'");
	ck_assert_str_eq(json_string_value(json_object_get(sc, "status")), status);
	free(status);
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "complete");
	/* The text block is the same JSON, for clients without structured content. */
	json_error_t e;
	json_t *text = json_loads(first_text(res), 0, &e);
	ck_assert(json_equal(text, sc));
	json_decref(text);
	ck_assert(json_is_object(json_object_get(json_object_get(res, "_meta"),
						 "io.modelcontextprotocol/serverInfo")));
	it_response_free(&r);
}
END_TEST

START_TEST(bike_status_follows_database_changes)
{
	char *orig = it_sql("SELECT battery_pct FROM fleet.bikes WHERE bike_id = 'VL-2051'");
	ck_assert_ptr_nonnull(orig);
	free(it_sql("UPDATE fleet.bikes SET battery_pct = 13 WHERE bike_id = 'VL-2051'"));
	struct it_response r;
	json_t *res = call_bike(srv.port, "VL-2051", &r);
	json_t *sc = json_object_get(res, "structuredContent");
	ck_assert_int_eq(json_integer_value(json_object_get(sc, "batteryPct")), 13);
	it_response_free(&r);
	free(orig);
}
END_TEST

START_TEST(other_region_reads_like_unknown)
{
	struct it_response a, b;
	json_t *ra = call_bike(srv.port, "VL-2047", &a); /* exists, FR-LYO */
	json_t *rb = call_bike(srv.port, "VL-9999", &b); /* does not exist */
	char *exists =
		it_sql("SELECT count(*) FROM fleet.bikes WHERE bike_id IN ('VL-2047','VL-9999')");
	ck_assert_str_eq(exists, "1");
	free(exists);
	ck_assert(json_is_true(json_object_get(ra, "isError")));
	ck_assert(json_is_true(json_object_get(rb, "isError")));
	ck_assert_ptr_null(json_object_get(ra, "structuredContent"));
	/* Same words once the id is taken out: no existence oracle. */
	char ta[512], tb[512];
	snprintf(ta, sizeof ta, "%s", first_text(ra));
	snprintf(tb, sizeof tb, "%s", first_text(rb));
	char *p = strstr(ta, "VL-2047");
	char *q = strstr(tb, "VL-9999");
	ck_assert(p && q);
	memcpy(p, "VL-XXXX", 7);
	memcpy(q, "VL-XXXX", 7);
	ck_assert_str_eq(ta, tb);
	it_response_free(&a);
	it_response_free(&b);
}
END_TEST

/* tools/call get_bike_status for bike with the envelope's logLevel (NULL: none). */
static void call_bike_logged(const char *bike, const char *level, struct it_response *r)
{
	const char *headers[] = {
		"Content-Type: application/json",   "Accept: application/json, text/event-stream",
		"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
		"Mcp-Name: get_bike_status",        NULL};
	char lv[80] = "";
	if (level)
		snprintf(lv, sizeof lv, ",\"io.modelcontextprotocol/logLevel\":\"%s\"", level);
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"get_bike_status\",\"arguments\":{\"bikeId\":\"%s\"},\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}%s}}}",
		bike, lv);
	it_http(srv.port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
}

/* Logging (deprecated in 2026-07-28, still offered): a request that sets logLevel hears how
 * its tools/call ended, on an SSE stream before the result; one without logLevel gets no
 * message and a plain JSON answer; a level above the outcome's sends nothing. */
START_TEST(tool_outcome_is_logged_only_when_asked)
{
	struct it_response r;
	call_bike_logged("VL-2048", "info", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "content-type: text/event-stream"));
	const char *m = strstr(r.body, "\"method\":\"notifications/message\"");
	const char *res = strstr(r.body, "\"result\"");
	ck_assert_msg(m && res && m < res, "%s", r.body);
	ck_assert_ptr_nonnull(strstr(r.body, "\"logger\":\"bikaroo.tools\""));
	ck_assert_ptr_nonnull(strstr(r.body, "\"outcome\":\"ok\""));
	it_response_free(&r);
	call_bike_logged("VL-2047", "warning", &r); /* another region: failed, a warning */
	ck_assert_ptr_nonnull(strstr(r.body, "\"level\":\"warning\""));
	ck_assert_ptr_nonnull(strstr(r.body, "\"outcome\":\"failed\""));
	it_response_free(&r);
	call_bike_logged("VL-2048", "error", &r);
	ck_assert_ptr_null(strstr(r.body, "notifications/message"));
	it_response_free(&r);
	call_bike_logged("VL-2048", NULL, &r);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "content-type: application/json"));
	ck_assert_ptr_null(strstr(r.body, "notifications/message"));
	it_response_free(&r);
	call_bike_logged("VL-2048", "loud", &r); /* not a level: an envelope error */
	ck_assert_int_eq(r.status, 400);
	ck_assert_ptr_nonnull(strstr(r.body, "-32602"));
	it_response_free(&r);
}
END_TEST

START_TEST(rls_alone_refuses_other_regions)
{
	/* As the server's login role, with no identity: nothing is visible. */
	char *n = it_sql_as_app("SELECT count(*) FROM fleet.bikes");
	ck_assert_str_eq(n, "0");
	free(n);
	/* Acting as marie (FR-PAR) in one transaction: only FR-PAR rows, even when the query
	 * asks for another region explicitly (the C-side check is not involved here). */
	n = it_sql_as_app(
		"SELECT count(*) FROM (SELECT fleet.act_as('marie','customer-care-assistant')) a,"
		" LATERAL (SELECT 1 FROM fleet.bikes WHERE region = 'FR-LYO') b");
	ck_assert_str_eq(n, "0");
	free(n);
	/* The read function alone, under the identity the transaction acts as. */
	n = it_sql_as_app("SELECT fleet.act_as('marie','customer-care-assistant');"
			  "SELECT count(*) FROM fleet.bike_status_for(ARRAY['VL-2047'])");
	ck_assert_str_eq(n, "0");
	free(n);
	n = it_sql_as_app("SELECT fleet.act_as('paul','customer-care-assistant');"
			  "SELECT count(*) FROM fleet.bike_status_for(ARRAY['VL-2047'])");
	ck_assert_str_eq(n, "1");
	free(n);
	/* No identity, no row. */
	n = it_sql_as_app("SELECT count(*) FROM fleet.bike_status_for(ARRAY['VL-2047'])");
	ck_assert_str_eq(n, "0");
	free(n);
	/* An unknown client application sees nothing, whoever the subject. */
	n = it_sql_as_app("SELECT fleet.act_as('marie','evil-client');"
			  "SELECT count(*) FROM fleet.bike_status_for(ARRAY['VL-2048'])");
	ck_assert_str_eq(n, "0");
	free(n);
	/* The identity is transaction-local: the next statement on the connection sees nothing. */
	n = it_sql_as_app_then("SELECT fleet.act_as('olivia','ops-assistant')",
			       "SELECT count(*) FROM fleet.bikes");
	ck_assert_str_eq(n, "0");
	free(n);
	/* The login role cannot write anything directly (it may update a bike's status only
	 * through the reporting policies: see test_report.c). */
	char *w = it_sql_as_app("UPDATE fleet.bikes SET region = 'BE-BRU'");
	ck_assert_ptr_null(w);
}
END_TEST

START_TEST(scopes_are_enforced)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LOCAL_SCOPES=fleet:report", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	struct it_response r;
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}", &r);
	ck_assert_int_eq(r.status, 403);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "insufficient_scope"));
	ck_assert_ptr_nonnull(strstr(r.headers, "scope=\"fleet:read\""));
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

START_TEST(viewer_and_readonly_client_can_read)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=dev", "BIKAROO_LOCAL_CLIENT=developer-ide",
			     NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	struct it_response r;
	json_t *res = call_bike(s.port, "VL-2048", &r);
	ck_assert(json_is_false(json_object_get(res, "isError")));
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

START_TEST(unknown_client_gets_nothing)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LOCAL_CLIENT=unregistered-app", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	struct it_response r;
	json_t *res = call_bike(s.port, "VL-2048", &r);
	ck_assert(json_is_true(json_object_get(res, "isError")));
	ck_assert_ptr_null(json_object_get(res, "structuredContent"));
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

START_TEST(refuses_superuser_and_owner_logins)
{
	char super[1024], owner[1024];
	snprintf(super, sizeof super, "DATABASE_URL=%s", it_env("IT_SUPER_URL"));
	snprintf(owner, sizeof owner, "DATABASE_URL=%s", it_env("BIKAROO_MIGRATE_URL"));
	struct it_server s;
	const char *e1[] = {super, NULL};
	ck_assert_int_eq(it_server_start(&s, e1), -1);
	const char *e2[] = {owner, NULL};
	ck_assert_int_eq(it_server_start(&s, e2), -1);
}
END_TEST

START_TEST(local_identity_refuses_public_address)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LISTEN=0.0.0.0", NULL};
	ck_assert_int_eq(it_server_start(&s, env), -1);
}
END_TEST

START_TEST(body_limits)
{
	size_t n = 10 * 1024 * 1024;
	char *big = mem_alloc(n + 1);
	memset(big, ' ', n);
	big[n] = '\0';
	const char *h[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/list", NULL};
	struct it_response r;
	it_http(srv.port, "POST", "/mcp", h, big, n, &r);
	ck_assert_int_eq(r.status, 413);
	it_response_free(&r);
	/* Without Content-Length (chunked): counted as it streams. */
	const char *hc[] = {"Content-Type: application/json", "Transfer-Encoding: chunked",
			    "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list", NULL};
	it_http(srv.port, "POST", "/mcp", hc, big, n, &r);
	ck_assert_int_eq(r.status, 413);
	it_response_free(&r);
	free(big);
	/* Deeply nested JSON is a parse error, not a crash. */
	size_t depth = 100000;
	char *deep = mem_alloc(2 * depth + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[2 * depth] = '\0';
	it_http(srv.port, "POST", "/mcp", h, deep, 2 * depth, &r);
	ck_assert_int_eq(r.status, 400);
	it_response_free(&r);
	free(deep);
	json_t *ok = call_bike(srv.port, "VL-2048", &r);
	ck_assert(json_is_false(json_object_get(ok, "isError")));
	it_response_free(&r);
}
END_TEST

struct par_arg {
	unsigned port;
	int ok;
};

static void *par_worker(void *p)
{
	struct par_arg *a = p;
	for (int i = 0; i < 25; i++) {
		struct it_response r;
		char params[200];
		snprintf(params, sizeof params,
			 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-%d\"}",
			 2000 + i * 3);
		it_mcp(a->port, "tools/call", "get_bike_status", params, &r);
		json_t *sc =
			json_object_get(json_object_get(r.json, "result"), "structuredContent");
		if (r.status == 200 && sc &&
		    strcmp(json_string_value(json_object_get(sc, "region")), "FR-PAR") == 0)
			a->ok++;
		it_response_free(&r);
	}
	return NULL;
}

START_TEST(parallel_reads)
{
	/* VL-2000+3i are all FR-PAR (n % 3 == 2): 8 clients x 25 reads on 4 workers. */
	pthread_t t[8];
	struct par_arg a[8];
	for (int i = 0; i < 8; i++) {
		a[i] = (struct par_arg){srv.port, 0};
		pthread_create(&t[i], NULL, par_worker, &a[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(a[i].ok, 25);
	}
}
END_TEST

/* What a caller sees when PostgreSQL goes away and comes back (docs/security.md): a backend
 * ended while idle is replaced without the caller noticing; a database that refuses the server
 * is 503 + Retry-After with a JSON-RPC error (never a result, never a tool result that looks
 * like an answer); once it accepts again, the next call is served. */
struct outage_seen {
	long status;
	bool retry_after, internal_error, result;
};

static void outage_call(unsigned port, const char *method, const char *name, const char *params,
			struct outage_seen *seen)
{
	struct it_response r;
	it_mcp(port, method, name, params, &r);
	seen->status = r.status;
	seen->retry_after = strcasestr(r.headers, "Retry-After: 30") != NULL;
	seen->internal_error = strstr(r.body, "\"code\":-32603") != NULL;
	seen->result = strstr(r.body, "\"result\"") != NULL;
	it_response_free(&r);
}

/* Ends every backend of the server's role and waits until they are gone (pg_terminate_backend
 * only signals them). */
static void outage_terminate(void)
{
	free(it_sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
		    " WHERE usename = 'fleet_app'"));
	for (int i = 0; i < 500; i++) {
		char *n =
			it_sql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'fleet_app'");
		bool gone = n && strcmp(n, "0") == 0;
		free(n);
		if (gone)
			return;
		usleep(10 * 1000);
	}
}

START_TEST(database_outage_is_503_then_recovers)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	static const char bike[] =
		"\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}";
	static const char read[] = "\"uri\":\"bikaroo://fleet/bikes/VL-2048\"";
	static const char report[] = "\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":"
				     "\"VL-2048\",\"issue\":\"flat_tire\"}";
	struct outage_seen before, idle_killed, call, res, rep, after;
	outage_call(s.port, "tools/call", "get_bike_status", bike, &before);
	outage_terminate();
	outage_call(s.port, "tools/call", "get_bike_status", bike, &idle_killed);
	char *reports_before = it_sql("SELECT count(*) FROM fleet.damage_reports");
	/* The outage: the server's role may not log in, and its connections are gone. Every
	 * assertion waits until the role is restored, so that a failure here leaves the shared
	 * database usable for the tests after this one. */
	free(it_sql("ALTER ROLE fleet_app NOLOGIN"));
	outage_terminate();
	outage_call(s.port, "tools/call", "get_bike_status", bike, &call);
	outage_call(s.port, "resources/read", "bikaroo://fleet/bikes/VL-2048", read, &res);
	outage_call(s.port, "tools/call", "report_damaged_bike", report, &rep);
	free(it_sql("ALTER ROLE fleet_app LOGIN"));
	char *reports_after = it_sql("SELECT count(*) FROM fleet.damage_reports");
	outage_call(s.port, "tools/call", "get_bike_status", bike, &after);
	ck_assert_int_eq(it_server_stop(&s), 0);

	ck_assert(before.status == 200 && before.result);
	ck_assert_msg(idle_killed.status == 200 && idle_killed.result, "status %ld",
		      idle_killed.status);
	struct outage_seen *down[] = {&call, &res, &rep};
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(down[i]->status, 503);
		ck_assert(down[i]->retry_after);
		ck_assert(down[i]->internal_error);
		ck_assert(!down[i]->result);
	}
	ck_assert_str_eq(reports_before, reports_after);
	ck_assert_msg(after.status == 200 && after.result, "after the outage: status %ld",
		      after.status);
	free(reports_before);
	free(reports_after);
}
END_TEST

START_TEST(migrations_twice_and_concurrently)
{
	free(it_sql("DROP DATABASE IF EXISTS it_migrate WITH (FORCE)"));
	char *created = it_sql("CREATE DATABASE it_migrate OWNER fleet_owner");
	ck_assert_ptr_nonnull(created);
	free(created);
	char url[1024];
	snprintf(url, sizeof url, "BIKAROO_MIGRATE_URL=%s", it_env("IT_MIGRATE_URL_2_RAW"));
	const char *env[] = {url, NULL};
	/* Two instances at once: both succeed, each file is applied once. */
	pid_t pids[2];
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(it_run("migrate", env));
	}
	for (int i = 0; i < 2; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	ck_assert_int_eq(it_run("migrate", env), 0);
	const char *q = "SELECT count(*) FROM fleet_meta.schema_migrations";
	char *here = it_sql_url(it_env("IT_MIGRATE_URL_2_RAW"), q);
	char *main_db = it_sql(q);
	ck_assert_ptr_nonnull(here);
	ck_assert_str_eq(here, main_db);
	/* Function files too: each recorded once, with the checksum of its text. */
	const char *qf =
		"SELECT count(*) || ' ' || md5(string_agg(name || checksum, ',' ORDER BY name))"
		" FROM fleet_meta.schema_functions";
	char *fn_here = it_sql_url(it_env("IT_MIGRATE_URL_2_RAW"), qf);
	char *fn_main = it_sql(qf);
	ck_assert_ptr_nonnull(fn_here);
	ck_assert_str_eq(fn_here, fn_main);
	free(fn_main);
	free(fn_here);
	free(here);
	free(main_db);
	free(it_sql("DROP DATABASE IF EXISTS it_migrate WITH (FORCE)"));
}
END_TEST

CHECK_SUITE(server)
{
	Suite *s = suite_create("server");
	TCase *tc = tcase_create("get_bike_status");
	tcase_add_unchecked_fixture(tc, srv_setup, srv_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bike_status_in_perimeter);
	tcase_add_test(tc, bike_status_follows_database_changes);
	tcase_add_test(tc, other_region_reads_like_unknown);
	tcase_add_test(tc, tool_outcome_is_logged_only_when_asked);
	tcase_add_test(tc, rls_alone_refuses_other_regions);
	tcase_add_test(tc, body_limits);
	tcase_add_test(tc, parallel_reads);
	suite_add_tcase(s, tc);
	TCase *id = tcase_create("identity-and-startup");
	tcase_set_timeout(id, 120);
	tcase_add_test(id, scopes_are_enforced);
	tcase_add_test(id, viewer_and_readonly_client_can_read);
	tcase_add_test(id, unknown_client_gets_nothing);
	tcase_add_test(id, refuses_superuser_and_owner_logins);
	tcase_add_test(id, local_identity_refuses_public_address);
	tcase_add_test(id, migrations_twice_and_concurrently);
	tcase_add_test(id, database_outage_is_503_then_recovers);
	suite_add_tcase(s, id);
	return s;
}
