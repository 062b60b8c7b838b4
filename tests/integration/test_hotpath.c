/* The hot path's guarantees (issue "Hot path at the database's own pace"): rights cached per
 * backend connection are validated by the rights epoch, so a committed change (a region
 * removed, a principal deactivated, a client's may_read revoked) is honoured by the very next
 * call on every connection and every instance, and a stale or forged cache entry widens
 * nothing; reads' audit rows written with the reads, in each caller's statement of the batch:
 * exactly one row per call under 32 concurrent callers, no answered read without its row across
 * a kill -9, and a failed batch fails its reads with 503. */
#include <check.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define HOT_CLIENT "hot-probe-app"
#define HOT_SETUP                                                                                  \
	IT_RIGHTS_SETUP ";"                                                                        \
			"DELETE FROM fleet.client_apps WHERE client_id = '" HOT_CLIENT "';"        \
			"INSERT INTO fleet.client_apps (client_id, name) VALUES ('" HOT_CLIENT     \
			"', 'Hot path probe')"
#define HOT_TEARDOWN                                                                               \
	IT_RIGHTS_TEARDOWN "; DELETE FROM fleet.client_apps WHERE client_id = '" HOT_CLIENT "'"
/* What rights-probe (FR-PAR) reads through HOT_CLIENT, as the server's statement reads it (the
 * capability judged once, the read under the identity act_as set): the bike's id when
 * visible, "" when not, and the rights fleet.act_as states. */
#define HOT_READ(bike)                                                                             \
	"SELECT coalesce((SELECT bike_id FROM fleet.bike_status_for(ARRAY['" bike "']) "           \
	"WHERE fleet.may_read('bike_status')), '') || '|' || coalesce(a.role, '') || '|' || "      \
	"a.regions::text || '|' || a.client_may_read FROM fleet.act_as('rights-probe', "           \
	"'" HOT_CLIENT "') a"
#define HOT_PAR "VL-3101" /* FR-PAR */
#define HOT_LYO "VL-3100" /* FR-LYO */
#define HOT_CONNS 4
/* The loads below are about the audit, not the volume limits (tests/integration/test_abuse.c). */
static const char *const hot_unlimited[] = {"BIKAROO_RATE_READS=0", NULL};

static char *hot_value(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	char *out = NULL;
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		out = mem_strdup(PQgetvalue(r, 0, 0));
	else if (PQresultStatus(r) == PGRES_COMMAND_OK)
		out = mem_strdup("");
	else
		fprintf(stderr, "hot_value: %s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return out;
}

/* Asserts that every connection's next read of bike says want (a prefix). */
static void hot_expect_all(PGconn **pg, const char *sql, const char *want, const char *what)
{
	for (int i = 0; i < HOT_CONNS; i++) {
		char *got = hot_value(pg[i], sql);
		ck_assert_msg(got && strncmp(got, want, strlen(want)) == 0,
			      "%s: connection %d read '%s', want '%s...'", what, i,
			      got ? got : "(error)", want);
		free(got);
	}
}

START_TEST(a_rights_change_is_honoured_by_the_next_call_on_every_connection)
{
	free(it_sql(HOT_SETUP));
	PGconn *pg[HOT_CONNS];
	for (int i = 0; i < HOT_CONNS; i++) {
		pg[i] = PQconnectdb(it_env("DATABASE_URL"));
		ck_assert_int_eq(PQstatus(pg[i]), CONNECTION_OK);
	}
	/* Every connection has the rights cached (read twice: the second is a cache hit). */
	hot_expect_all(pg, HOT_READ(HOT_PAR), HOT_PAR "|customer_care|{FR-PAR}|true", "warm");
	hot_expect_all(pg, HOT_READ(HOT_PAR), HOT_PAR "|customer_care|{FR-PAR}|true", "cached");
	hot_expect_all(pg, HOT_READ(HOT_LYO), "|customer_care|{FR-PAR}|true", "other region");

	/* A region removed, another granted: the very next call on each connection. */
	free(it_sql("UPDATE fleet.principal_regions SET region = 'FR-LYO' "
		    "WHERE subject = 'rights-probe'"));
	hot_expect_all(pg, HOT_READ(HOT_PAR), "|customer_care|{FR-LYO}|true", "region removed");
	hot_expect_all(pg, HOT_READ(HOT_LYO), HOT_LYO "|customer_care|{FR-LYO}|true",
		       "region given");

	/* The principal deactivated: no role, no perimeter, nothing visible. */
	free(it_sql("UPDATE fleet.principals SET active = false WHERE subject = 'rights-probe'"));
	hot_expect_all(pg, HOT_READ(HOT_LYO), "||{}|false", "principal deactivated");
	free(it_sql("UPDATE fleet.principals SET active = true WHERE subject = 'rights-probe'"));
	hot_expect_all(pg, HOT_READ(HOT_LYO), HOT_LYO "|customer_care|{FR-LYO}|true",
		       "reactivated");

	/* The client application's may_read revoked. */
	free(it_sql("UPDATE fleet.client_apps SET may_read = false WHERE client_id = '" HOT_CLIENT
		    "'"));
	/* (act_as states the right; the read answers nothing without it, and the C check behind
	 * it refuses the read.) */
	hot_expect_all(pg, HOT_READ(HOT_LYO), "|customer_care|{FR-LYO}|false", "may_read revoked");

	/* A principal that did not exist when its "unknown" was cached is known at once. */
	hot_expect_all(pg,
		       "SELECT coalesce(role, '-') FROM fleet.act_as('hot-late', '" HOT_CLIENT "')",
		       "-", "unknown");
	free(it_sql("INSERT INTO fleet.principals (subject, display_name, role) VALUES "
		    "('hot-late', 'Late', 'viewer')"));
	hot_expect_all(pg,
		       "SELECT coalesce(role, '-') FROM fleet.act_as('hot-late', '" HOT_CLIENT "')",
		       "viewer", "inserted");
	free(it_sql("DELETE FROM fleet.principals WHERE subject = 'hot-late'"));

	for (int i = 0; i < HOT_CONNS; i++)
		PQfinish(pg[i]);
	free(it_sql(HOT_TEARDOWN));
}
END_TEST

/* A cache entry of another epoch than the current one is never used: one planted with a wider
 * perimeter and the previous epoch (a stale entry), or the next one (a forged entry from the
 * future), leaves the caller with what the tables say. Without the epoch check both reads
 * below would see the FR-LYO bike. */
START_TEST(a_stale_or_forged_epoch_widens_nothing)
{
	free(it_sql(HOT_SETUP));
	PGconn *pg = PQconnectdb(it_env("DATABASE_URL"));
	ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
	char *v = hot_value(pg, HOT_READ(HOT_LYO));
	ck_assert_str_eq(v, "|customer_care|{FR-PAR}|true");
	free(v);
	for (int delta = -1; delta <= 1; delta += 2) {
		char plant[1024];
		snprintf(plant, sizeof plant,
			 "SELECT set_config('bikaroo_rights.s' || (hashtext('rights-probe' || "
			 "E'\\x1f' || '" HOT_CLIENT "') & 63), concat_ws(E'\\x1f', "
			 "(SELECT epoch + (%d) FROM fleet.rights_epoch), 'rights-probe', "
			 "'" HOT_CLIENT "', 'fleet_operator', 't', 't', 't', 'f', "
			 "'BE-BRU,FR-LYO,FR-PAR', 'bike_status,cases,damage_report,status_codes'), "
			 "false)",
			 delta);
		free(hot_value(pg, plant));
		v = hot_value(pg, HOT_READ(HOT_LYO));
		ck_assert_msg(v && strcmp(v, "|customer_care|{FR-PAR}|true") == 0,
			      "epoch %+d widened the read: %s", delta, v ? v : "(error)");
		free(v);
	}
	PQfinish(pg);
	free(it_sql(HOT_TEARDOWN));
}
END_TEST

/* One get_bike_status call with JSON-RPC id `id` (a string) as local user rights-probe or the
 * server's configured one; returns the HTTP status, *ok when it carried a result that is not an
 * error. */
static long hot_call(unsigned port, const char *id, const char *bike, bool *ok)
{
	const char *headers[] = {
		"Content-Type: application/json",   "Accept: application/json, text/event-stream",
		"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
		"Mcp-Name: get_bike_status",        NULL};
	char body[512];
	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"%s\"},\"_meta\":{"
		 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		 "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		 id, bike);
	struct it_response r;
	it_http(port, "POST", "/mcp", headers, body, strlen(body), &r);
	json_t *res = r.json ? json_object_get(r.json, "result") : NULL;
	*ok = r.status == 200 && res && !json_is_true(json_object_get(res, "isError")) &&
	      json_object_get(res, "structuredContent");
	long status = r.status;
	it_response_free(&r);
	return status;
}

/* Every instance honours the change at its next calls, whichever worker (and so database
 * connection) serves them. */
START_TEST(a_rights_change_is_honoured_by_every_instance)
{
	free(it_sql(HOT_SETUP));
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=rights-probe",
			     "BIKAROO_LOCAL_CLIENT=" HOT_CLIENT, "BIKAROO_RATE_READS=0", NULL};
	struct it_server s[2];
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(it_server_start(&s[k], env), 0);
	bool ok;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(hot_call(s[k].port, "warm", HOT_PAR, &ok), 200);
			ck_assert(ok);
		}
	free(it_sql("UPDATE fleet.principal_regions SET region = 'FR-LYO' "
		    "WHERE subject = 'rights-probe'"));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(hot_call(s[k].port, "after", HOT_PAR, &ok), 200);
			ck_assert_msg(!ok, "instance %d still read an FR-PAR bike", k);
			ck_assert_int_eq(hot_call(s[k].port, "after", HOT_LYO, &ok), 200);
			ck_assert_msg(ok, "instance %d does not read the FR-LYO bike", k);
		}
	free(it_sql("UPDATE fleet.client_apps SET may_read = false WHERE client_id = '" HOT_CLIENT
		    "'"));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(hot_call(s[k].port, "revoked", HOT_LYO, &ok), 200);
			ck_assert_msg(!ok, "instance %d read through a client without may_read", k);
		}
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(it_server_stop(&s[k]), 0);
	free(it_sql(HOT_TEARDOWN));
}
END_TEST

#define HOT_CALLERS 32

/* A load's account, per caller (each written by its caller's thread only): the ids of its
 * answered reads (new) and how many of its calls got anything else. */
struct hot_load {
	char **ids[HOT_CALLERS];
	size_t n[HOT_CALLERS], cap[HOT_CALLERS];
	int failed[HOT_CALLERS];
};

static void hot_prepare(void *ctx, struct it_load_call *c)
{
	(void)ctx;
	snprintf(c->arguments, sizeof c->arguments, "{\"bikeId\":\"VL-2048\"}");
}

static void hot_check(void *ctx, const struct it_load_call *c)
{
	struct hot_load *h = ctx;
	int i = c->caller;
	json_t *res = json_object_get(c->r.json, "result");
	if (c->r.status != 200 || !res || json_is_true(json_object_get(res, "isError")) ||
	    !json_object_get(res, "structuredContent")) {
		h->failed[i]++;
		return;
	}
	if (h->n[i] == h->cap[i]) {
		h->cap[i] = h->cap[i] ? h->cap[i] * 2 : 64;
		h->ids[i] = mem_realloc(h->ids[i], h->cap[i] * sizeof *h->ids[i]);
	}
	h->ids[i][h->n[i]++] = mem_strdup(c->id);
}

/* HOT_CALLERS concurrent callers, each making `calls` reads of VL-2048 with ids
 * "<prefix>-<caller>-<n>" (0: until the server is gone, which kill_pid, when > 0, is after
 * 800 ms). */
static void hot_run_callers(struct hot_load *h, unsigned port, const char *prefix, long calls,
			    pid_t kill_pid)
{
	memset(h, 0, sizeof *h);
	struct it_load l = {.port = port,
			    .prefix = prefix,
			    .callers = HOT_CALLERS,
			    .calls = calls,
			    .until_us = calls ? 0 : it_now_us() + 60 * 1000000LL,
			    .prepare = hot_prepare,
			    .check = hot_check,
			    .ctx = h};
	ck_assert_int_eq(it_load_start(&l), 0);
	if (kill_pid > 0) {
		it_sleep_ms(800);
		kill(kill_pid, SIGKILL);
		waitpid(kill_pid, NULL, 0);
	}
	it_load_wait(&l);
}

/* The audit rows of the load's calls (it_audit_count); returns how many were answered, *failed
 * how many were not. Frees the account. */
static size_t hot_count_rows(struct hot_load *h, const char *prefix, struct it_audit_count *a,
			     int *failed)
{
	char **all = NULL;
	size_t n = 0;
	*failed = 0;
	for (int i = 0; i < HOT_CALLERS; i++) {
		all = mem_realloc(all, (n + h->n[i] + 1) * sizeof *all);
		memcpy(all + n, h->ids[i], h->n[i] * sizeof *all);
		n += h->n[i];
		*failed += h->failed[i];
	}
	ck_assert_int_eq(it_audit_count(prefix, all, n, a), 0);
	for (size_t k = 0; k < n; k++)
		free(all[k]);
	free(all);
	for (int i = 0; i < HOT_CALLERS; i++)
		free(h->ids[i]);
	return n;
}

START_TEST(every_call_of_32_concurrent_callers_has_exactly_one_audit_row)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, hot_unlimited), 0);
	char prefix[32];
	snprintf(prefix, sizeof prefix, "gc%ld", (long)time(NULL));
	struct hot_load *h = mem_alloc(sizeof *h);
	hot_run_callers(h, s.port, prefix, 15, 0);
	struct it_audit_count a;
	int failed;
	size_t answered = hot_count_rows(h, prefix, &a, &failed);
	free(h);
	ck_assert_int_eq(failed, 0);
	ck_assert_int_eq(answered, HOT_CALLERS * 15);
	ck_assert_int_eq(a.of_ids, (long)answered);
	ck_assert_int_eq(a.all, (long)answered);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

START_TEST(a_kill_during_load_leaves_no_answered_read_without_its_row)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, hot_unlimited), 0);
	char prefix[32];
	snprintf(prefix, sizeof prefix, "k9%ld", (long)time(NULL));
	pid_t pid = s.pid;
	s.pid = 0; /* killed below, not stopped */
	struct hot_load *h = mem_alloc(sizeof *h);
	hot_run_callers(h, s.port, prefix, 0, pid);
	struct it_audit_count a;
	int failed;
	size_t answered = hot_count_rows(h, prefix, &a, &failed);
	free(h);
	ck_assert_msg(answered > HOT_CALLERS, "only %zu reads answered before the kill", answered);
	ck_assert_int_eq(a.of_ids, (long)answered);
	/* Rows of reads whose answers the kill cut off may exist; never more than one per id. */
	ck_assert_int_ge(a.all, a.of_ids);
	ck_assert_int_eq(a.doubled, 0);
}
END_TEST

START_TEST(a_failed_audit_batch_fails_its_reads_with_503)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, hot_unlimited), 0);
	s.reads_may_fall_back = true;
	bool ok;
	ck_assert_int_eq(hot_call(s.port, "batch-before", "VL-2048", &ok), 200);
	ck_assert(ok);
	free(it_sql("REVOKE EXECUTE ON FUNCTION fleet.audit_reads(text, text, jsonb, boolean, "
		    "text[]) FROM fleet_app"));
	char id[48];
	snprintf(id, sizeof id, "batch-fails-%ld", (long)time(NULL));
	long status = hot_call(s.port, id, "VL-2048", &ok);
	free(it_sql(
		"GRANT EXECUTE ON FUNCTION fleet.audit_reads(text, text, jsonb, boolean, text[]) "
		"TO fleet_app"));
	ck_assert_int_eq(status, 503);
	ck_assert(!ok);
	char *sql =
		mem_printf("SELECT count(*) FROM fleet.audit_log WHERE request_id = '\"%s\"'", id);
	char *n = it_sql(sql);
	ck_assert_str_eq(n, "0");
	free(n);
	free(sql);
	ck_assert_int_eq(hot_call(s.port, "batch-after", "VL-2048", &ok), 200);
	ck_assert(ok);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* An administrator's lock on audit_log fails the batch after fleet.audit_reads's lock_timeout
 * (2 s): the read answers 503 instead of hanging behind the lock with every other read of the
 * instance (the client's timeout is 15 s: a stalled batch fails this test), and reads are
 * answered again once the lock is gone. */
START_TEST(a_locked_audit_log_fails_reads_with_503_not_a_hang)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, hot_unlimited), 0);
	s.reads_may_fall_back = true;
	bool ok;
	ck_assert_int_eq(hot_call(s.port, "lock-before", "VL-2048", &ok), 200);
	PGconn *admin = PQconnectdb(it_env("IT_SUPER_URL"));
	ck_assert_int_eq(PQstatus(admin), CONNECTION_OK);
	PQclear(PQexec(admin, "BEGIN"));
	PGresult *r = PQexec(admin, "LOCK TABLE fleet.audit_log IN ACCESS EXCLUSIVE MODE");
	ck_assert_int_eq(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	long status = hot_call(s.port, "lock-held", "VL-2048", &ok);
	PQclear(PQexec(admin, "ROLLBACK"));
	PQfinish(admin);
	ck_assert_int_eq(status, 503);
	ck_assert(!ok);
	ck_assert_int_eq(hot_call(s.port, "lock-after", "VL-2048", &ok), 200);
	ck_assert(ok);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* A JSON-RPC id the server stores cut to its request-id column, where the cut fell inside a
 * character ("é" at the end of a long id): the read is answered and audited, never an internal
 * error from PostgreSQL refusing half a UTF-8 sequence (the id is stored as ASCII JSON). */
START_TEST(a_long_non_ascii_request_id_is_read_and_audited)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, hot_unlimited), 0);
	char prefix[32];
	snprintf(prefix, sizeof prefix, "u8-%ld-", (long)time(NULL));
	for (int pad = 88; pad <= 95; pad++) {
		char id[160];
		snprintf(id, sizeof id, "%s%0*d\\u00e9", prefix, pad - (int)strlen(prefix), 0);
		bool ok;
		long status = hot_call(s.port, id, "VL-2048", &ok);
		ck_assert_msg(status == 200 && ok, "id of %d bytes and an e-acute: %ld", pad,
			      status);
	}
	char *sql = mem_printf(
		"SELECT count(*) FROM fleet.audit_log WHERE request_id LIKE '\"%s%%'", prefix);
	char *n = it_sql(sql);
	ck_assert_str_eq(n, "8");
	free(n);
	free(sql);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* The tools a tools/list of server s lists, as " name name ... " (new string). */
static char *hot_tools(const struct it_server *s)
{
	struct it_response r;
	it_mcp(s->port, "tools/list", NULL, "", &r);
	json_t *tools = json_object_get(json_object_get(r.json, "result"), "tools");
	ck_assert_msg(json_is_array(tools), "%s", r.body);
	char *names = mem_strdup(" ");
	size_t i;
	json_t *t;
	json_array_foreach (tools, i, t) {
		char *more =
			mem_printf("%s%s ", names, json_string_value(json_object_get(t, "name")));
		free(names);
		names = more;
	}
	it_response_free(&r);
	return names;
}

#define HOT_UNITS "bikaroo_audit_batches_total{result=\"ok\"}"
#define HOT_HITS "bikaroo_rights_cache_lookups_total{result=\"hit\"}"

/* A list takes the caller's rights from what its loop already knows: no database unit for them
 * while no rights change has been heard. A role narrowed between two lists: the call is refused
 * at once (judged in the database as it runs), and the list shows the narrower rights as soon as
 * the change's notification is heard, never the wider ones again. */
START_TEST(lists_use_known_rights_until_a_rights_change_is_heard)
{
	free(it_sql(
		HOT_SETUP
		"; UPDATE fleet.client_apps SET may_report = true WHERE client_id = '" HOT_CLIENT
		"'"));
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=rights-probe",
			     "BIKAROO_LOCAL_CLIENT=" HOT_CLIENT, "BIKAROO_THREADS=1", NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	/* Lists until one is answered from rights already known: the change feed listens (it
	 * starts with the server, on a connection of its own). */
	char *before = NULL;
	for (int i = 0; i < 250 && it_metric(&s, HOT_HITS) < 1; i++) {
		free(before);
		before = hot_tools(&s);
		it_sleep_ms(20);
	}
	ck_assert_msg(strstr(before, " get_bike_status ") &&
			      strstr(before, " report_damaged_bike "),
		      "%s", before);
	long units = it_metric(&s, HOT_UNITS), hits = it_metric(&s, HOT_HITS);
	for (int i = 0; i < 5; i++) {
		char *again = hot_tools(&s);
		ck_assert_str_eq(again, before);
		free(again);
	}
	ck_assert_int_eq(it_metric(&s, HOT_UNITS), units);
	ck_assert_int_eq(it_metric(&s, HOT_HITS), hits + 5);

	long heard = it_metric(&s, "bikaroo_rights_changes_heard_total");
	free(it_sql("UPDATE fleet.principals SET role = 'viewer' WHERE subject = 'rights-probe'"));
	struct it_response r;
	it_mcp(s.port, "tools/call", "report_damaged_bike",
	       "\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"" HOT_PAR
	       "\",\"issue\":\"flat_tire\"}",
	       &r);
	json_t *res = json_object_get(r.json, "result");
	ck_assert_msg(res && json_is_true(json_object_get(res, "isError")), "not refused: %s",
		      r.body);
	it_response_free(&r);
	for (int i = 0; i < 250 && it_metric(&s, "bikaroo_rights_changes_heard_total") <= heard;
	     i++)
		it_sleep_ms(20);
	ck_assert_int_gt(it_metric(&s, "bikaroo_rights_changes_heard_total"), heard);
	for (int i = 0; i < 3; i++) {
		char *after = hot_tools(&s);
		ck_assert_msg(strstr(after, " get_bike_status ") &&
				      !strstr(after, " report_damaged_bike "),
			      "list %d after the change: %s", i, after);
		free(after);
	}
	ck_assert_int_eq(it_metric(&s, HOT_UNITS), units + 1); /* read once more, then known */
	free(before);
	ck_assert_int_eq(it_server_stop(&s), 0);
	free(it_sql(HOT_TEARDOWN));
}
END_TEST

/* ---- the read's plan ---------------------------------------------------------------------- */

/* The plan of the server's statement for read (its text as the server's connections last ran
 * it, found by fn, e.g. "fleet.bike_status_for("), made generic and pinned as the server makes
 * it, for a caller whose perimeter holds no row (a region just opened): new string. */
static char *hot_plan(const char *fn, const char *params)
{
	char *like = mem_printf("SELECT query FROM pg_stat_activity WHERE usename = 'fleet_app' AND"
				" query LIKE 'WITH r AS MATERIALIZED (%%%s%%' LIMIT 1",
				fn);
	char *stmt = it_sql(like);
	ck_assert_msg(stmt && *stmt, "no statement of the server's calls %s", fn);
	PGconn *pg = PQconnectdb(it_env("DATABASE_URL"));
	ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
	free(hot_value(pg, "BEGIN"));
	free(hot_value(pg, "SELECT 1 FROM fleet.act_as('hot-new', '" HOT_CLIENT "'), "
			   "set_config('plan_cache_mode', 'force_generic_plan', true)"));
	PGresult *r = PQprepare(pg, "read", stmt, 0, NULL);
	ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQerrorMessage(pg));
	PQclear(r);
	char *explain = mem_printf("EXPLAIN EXECUTE read(%s)", params);
	r = PQexec(pg, explain);
	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
	char *plan = mem_strdup("");
	for (int i = 0; i < PQntuples(r); i++) {
		char *more = mem_printf("%s%s\n", plan, PQgetvalue(r, i, 0));
		free(plan);
		plan = more;
	}
	PQclear(r);
	PQfinish(pg);
	free(explain);
	free(stmt);
	free(like);
	return plan;
}

/* The read function is inlined into the server's statement (no call of it, no plpgsql, no SET
 * clause per call), and the rows are found by their keys whoever the plan is made for: a plan
 * made once per connection for a caller whose region has no bike yet still reads by primary
 * key, never a scan of a region that every later caller of the connection would pay. */
START_TEST(the_read_is_inlined_and_found_by_its_keys_whoever_its_plan_is_made_for)
{
	free(it_sql(HOT_SETUP "; DELETE FROM fleet.principals WHERE subject = 'hot-new';"
			      "DELETE FROM fleet.regions WHERE code = 'ZZ-NEW';"
			      "INSERT INTO fleet.regions (code, name) VALUES ('ZZ-NEW', 'New');"
			      "INSERT INTO fleet.principals (subject, display_name, role) VALUES "
			      "('hot-new', 'New region', 'fleet_operator');"
			      "INSERT INTO fleet.principal_regions (subject, region) VALUES "
			      "('hot-new', 'ZZ-NEW')"));
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=rights-probe",
			     "BIKAROO_LOCAL_CLIENT=" HOT_CLIENT, NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	bool ok;
	ck_assert_int_eq(hot_call(s.port, "plan", HOT_PAR, &ok), 200);
	ck_assert(ok);
	char *plan = hot_plan("fleet.bike_status_for(", "'{" HOT_PAR "}', '[]'");
	ck_assert_msg(!strstr(plan, "Function Scan on bike_status_for"), "not inlined:\n%s", plan);
	/* By key: an index scan of bikes_pkey, or a bitmap of it when the table's statistics make
	 * one cheaper for the keys' array; never a scan of the table. */
	ck_assert_msg((strstr(plan, "Index Scan using bikes_pkey on bikes") ||
		       strstr(plan, "Bitmap Index Scan on bikes_pkey")) &&
			      !strstr(plan, "Seq Scan on bikes"),
		      "not by key:\n%s", plan);
	free(plan);
	/* (A case is found by its key too once there are many; the suite's few are read whole.) */
	struct it_response r;
	it_mcp(s.port, "resources/read", "bikaroo://cases/IC-1", "\"uri\":\"bikaroo://cases/IC-1\"",
	       &r);
	it_response_free(&r);
	plan = hot_plan("fleet.case_for(", "'{IC-1}', '[]'");
	ck_assert_msg(!strstr(plan, "Function Scan on case_for"), "not inlined:\n%s", plan);
	free(plan);
	ck_assert_int_eq(it_server_stop(&s), 0);
	free(it_sql(HOT_TEARDOWN "; DELETE FROM fleet.principals WHERE subject = 'hot-new';"
				 "DELETE FROM fleet.regions WHERE code = 'ZZ-NEW'"));
}
END_TEST

CHECK_SUITE(hotpath)
{
	Suite *s = suite_create("hotpath");
	TCase *rights = tcase_create("rights epoch");
	tcase_set_timeout(rights, 60);
	tcase_add_test(rights, a_rights_change_is_honoured_by_the_next_call_on_every_connection);
	tcase_add_test(rights, a_stale_or_forged_epoch_widens_nothing);
	tcase_add_test(rights, a_rights_change_is_honoured_by_every_instance);
	tcase_add_test(rights, lists_use_known_rights_until_a_rights_change_is_heard);
	suite_add_tcase(s, rights);
	TCase *audit = tcase_create("audit rows of reads");
	tcase_set_timeout(audit, 120);
	tcase_add_test(audit, every_call_of_32_concurrent_callers_has_exactly_one_audit_row);
	tcase_add_test(audit, a_kill_during_load_leaves_no_answered_read_without_its_row);
	tcase_add_test(audit, a_failed_audit_batch_fails_its_reads_with_503);
	tcase_add_test(audit, a_locked_audit_log_fails_reads_with_503_not_a_hang);
	tcase_add_test(audit, a_long_non_ascii_request_id_is_read_and_audited);
	suite_add_tcase(s, audit);
	TCase *plan = tcase_create("the read's plan");
	tcase_set_timeout(plan, 60);
	tcase_add_test(plan,
		       the_read_is_inlined_and_found_by_its_keys_whoever_its_plan_is_made_for);
	suite_add_tcase(s, plan);
	return s;
}
