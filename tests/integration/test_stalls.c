/* Integration tests of what must never stall a loop. Writes stuck behind a row lock, on a server
 * of one loop with 2 database connections: another transaction holds a bike's row while reports
 * on it come, and other callers read other bikes meanwhile. The reads go on being answered at
 * their pace (a write waiting for a connection holds none of them up), each stuck report ends
 * within its call's deadline with 503 + Retry-After (the server's statement_timeout ends it
 * first: its transaction rolls back and its connection stays), each attempt leaves its audit
 * row (written in a transaction of its own, the write's being rolled back), and nothing of the
 * reports is written. */
#define _GNU_SOURCE /* strcasestr */
#include <check.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define ST_BIKE "VL-990031"
#define ST_STUCK 6         /* reports on the locked bike, three a loop */
#define ST_TIMEOUT_MS 3000 /* BIKAROO_CALL_TIMEOUT_MS */
#define ST_READERS 4       /* callers reading other bikes */
#define ST_READS_MAX 20000

/* The readers' latencies (microseconds) and answers that were not a result. */
struct st_reads {
	pthread_mutex_t lock;
	long long us[ST_READS_MAX];
	int n, bad;
	char first_bad[256];
};

static void st_read_prepare(void *ctx, struct it_load_call *c)
{
	(void)ctx;
	/* FR-PAR bikes of the demo data (VL-1001, VL-1004...), never the locked one. */
	snprintf(c->arguments, sizeof c->arguments, "{\"bikeId\":\"VL-%ld\"}",
		 1001 + 3 * ((c->caller * 7919L + c->n * 104729L) % 1332));
}

static void st_read_check(void *ctx, const struct it_load_call *c)
{
	struct st_reads *r = ctx;
	bool ok = c->r.status == 200 && json_object_get(c->r.json, "result") &&
		  !json_is_true(json_object_get(json_object_get(c->r.json, "result"), "isError"));
	pthread_mutex_lock(&r->lock);
	if (!ok && r->bad++ == 0)
		snprintf(r->first_bad, sizeof r->first_bad, "%ld after %lld ms: %.150s",
			 c->r.status, (c->ended_us - c->started_us) / 1000,
			 c->r.body ? c->r.body : "");
	if (r->n < ST_READS_MAX)
		r->us[r->n++] = c->ended_us - c->started_us;
	pthread_mutex_unlock(&r->lock);
}

static int st_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* Reads for ms milliseconds by ST_READERS callers; their p99 and most (ms) into p99, max. */
static void st_read_for(unsigned port, long ms, const char *prefix, struct st_reads *r, double *p99,
			double *max)
{
	r->n = r->bad = 0;
	struct it_load l = {.port = port,
			    .prefix = prefix,
			    .callers = ST_READERS,
			    .until_us = it_now_us() + ms * 1000,
			    .prepare = st_read_prepare,
			    .check = st_read_check,
			    .ctx = r};
	ck_assert_int_eq(it_load_start(&l), 0);
	it_load_wait(&l);
	ck_assert_int_gt(r->n, 0);
	qsort(r->us, (size_t)r->n, sizeof r->us[0], st_cmp);
	*p99 = (double)r->us[(size_t)r->n * 99 / 100] / 1000;
	*max = (double)r->us[r->n - 1] / 1000;
}

/* One stuck report, on a thread of its own. */
struct st_report {
	pthread_t thread;
	unsigned port;
	char id[32];
	long status;
	bool retry_after;
	double ms;
	char body[512];
};

static void *st_report_run(void *p)
{
	struct st_report *s = p;
	struct it_conn c;
	it_conn_open(&c, s->port);
	struct it_response r;
	long long t0 = it_now_us();
	it_conn_tool(&c, NULL, s->id, "report_damaged_bike",
		     "{\"bikeId\":\"" ST_BIKE "\",\"issue\":\"flat_tire\"}", &r);
	s->ms = (double)(it_now_us() - t0) / 1000;
	s->status = r.status;
	s->retry_after = r.headers && strcasestr(r.headers, "Retry-After: ");
	snprintf(s->body, sizeof s->body, "%s", r.body ? r.body : "");
	it_response_free(&r);
	it_conn_close(&c);
	return NULL;
}

static long st_count(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/* The test's own bike (FR-PAR, available), and another transaction holding its row: the
 * holder's connection (st_let_go ends it). */
static PGconn *st_hold_row(const char *bike)
{
	char sql[256];
	snprintf(sql, sizeof sql,
		 "INSERT INTO fleet.bikes (bike_id, region, status, battery_pct, last_seen_at) "
		 "VALUES ('%s', 'FR-PAR', 'available', 80, now()) ON CONFLICT (bike_id) DO "
		 "UPDATE SET status = 'available'",
		 bike);
	free(it_sql(sql));
	PGconn *holder = PQconnectdb(it_env("IT_SUPER_URL"));
	ck_assert_int_eq(PQstatus(holder), CONNECTION_OK);
	snprintf(sql, sizeof sql,
		 "BEGIN; SELECT 1 FROM fleet.bikes WHERE bike_id = '%s' FOR UPDATE", bike);
	PGresult *res = PQexec(holder, sql);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	PQclear(res);
	return holder;
}

static void st_let_go(PGconn *holder)
{
	PQclear(PQexec(holder, "ROLLBACK"));
	PQfinish(holder);
}

START_TEST(a_write_stuck_behind_a_row_lock_never_starves_the_reads_of_its_loop)
{
	long reports0 = st_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = "
				 "'" ST_BIKE "'");
	long cases0 = st_count("SELECT count(*) FROM fleet.cases WHERE bike_id = '" ST_BIKE "'");
	char timeout[64];
	snprintf(timeout, sizeof timeout, "BIKAROO_CALL_TIMEOUT_MS=%d", ST_TIMEOUT_MS);
	const char *env[] = {"BIKAROO_THREADS=1",
			     "BIKAROO_DB_CONNECTIONS=2",
			     timeout,
			     "BIKAROO_LOCAL_SUBJECT=marie",
			     "BIKAROO_LOCAL_CLIENT=customer-care-assistant",
			     "BIKAROO_RATE_READS=0",
			     "BIKAROO_RATE_WRITES=0",
			     NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	static struct st_reads reads = {.lock = PTHREAD_MUTEX_INITIALIZER};
	double p99_before, max_before, p99_during, max_during;
	st_read_for(s.port, 1500, "before", &reads, &p99_before, &max_before);
	ck_assert_msg(reads.bad == 0, "a read before failed: %s", reads.first_bad);

	/* Another transaction holds the bike's row for longer than any call may last. */
	PGconn *holder = st_hold_row(ST_BIKE);
	static struct st_report stuck[ST_STUCK];
	char *ids[ST_STUCK];
	for (int i = 0; i < ST_STUCK; i++) {
		stuck[i] = (struct st_report){.port = s.port};
		snprintf(stuck[i].id, sizeof stuck[i].id, "stuck-%d", i);
		ids[i] = stuck[i].id;
		pthread_create(&stuck[i].thread, NULL, st_report_run, &stuck[i]);
	}
	it_sleep_ms(200); /* the reports wait on the row, or for a connection */
	st_read_for(s.port, ST_TIMEOUT_MS - 700, "during", &reads, &p99_during, &max_during);
	for (int i = 0; i < ST_STUCK; i++)
		pthread_join(stuck[i].thread, NULL);
	st_let_go(holder);
	printf("stuck writes: %d callers reading, p99 %.1f ms (max %.1f) before; %d reads while "
	       "%d reports waited on a locked row, p99 %.1f ms (max %.1f): %.1f times\n",
	       ST_READERS, p99_before, max_before, reads.n, ST_STUCK, p99_during, max_during,
	       p99_during / (p99_before > 0 ? p99_before : 1));
	for (int i = 0; i < ST_STUCK; i++)
		printf("  stuck report %d: %ld%s after %.0f ms\n", i, stuck[i].status,
		       stuck[i].retry_after ? " with Retry-After" : "", stuck[i].ms);
	fflush(stdout);

	/* The reads were answered, at their pace: a stalled loop holds them for the writes'
	 * whole deadline (seconds), then refuses them at their own. */
	ck_assert_msg(reads.bad == 0, "%d reads during the stall failed, the first %s", reads.bad,
		      reads.first_bad);
	ck_assert_msg(max_during < 1000, "a read waited %.0f ms while the writes were stuck",
		      max_during);
	/* Each stuck report: 503 + Retry-After within its call's deadline, its audit row, and
	 * the server ended it (statement_timeout) before the executor would close a connection. */
	for (int i = 0; i < ST_STUCK; i++)
		ck_assert_msg(stuck[i].status == 503 && stuck[i].retry_after &&
				      stuck[i].ms < ST_TIMEOUT_MS + 250,
			      "report %d: %ld%s after %.0f ms: %s", i, stuck[i].status,
			      stuck[i].retry_after ? " with Retry-After" : "", stuck[i].ms,
			      stuck[i].body);
	struct it_audit_count a;
	ck_assert_int_eq(it_audit_count("stuck", ids, ST_STUCK, &a), 0);
	ck_assert_msg(a.of_ids == ST_STUCK && a.doubled == 0,
		      "%ld audit rows for %d stuck reports (%ld doubled)", a.of_ids, ST_STUCK,
		      a.doubled);
	ck_assert_int_eq(st_count("SELECT count(*) FROM fleet.audit_log WHERE btrim(request_id, "
				  "'\"') LIKE 'stuck-%' AND outcome = 'error' AND detail = "
				  "'unavailable'"),
			 ST_STUCK);
	ck_assert_int_eq(it_log_count(&s, "its connection is closed"), 0);
	ck_assert_int_ge(it_log_count(&s, "ended at its deadline"), 1);
	/* Nothing of them was written: no report, no case, the bike as it was. */
	ck_assert_int_eq(st_count("SELECT count(*) FROM fleet.damage_reports WHERE bike_id = "
				  "'" ST_BIKE "'"),
			 reports0);
	ck_assert_int_eq(st_count("SELECT count(*) FROM fleet.cases WHERE bike_id = "
				  "'" ST_BIKE "'"),
			 cases0);
	char *status = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = '" ST_BIKE "'");
	ck_assert_str_eq(status, "available");
	free(status);
	/* The row free again, the same server files the report. */
	struct it_conn c;
	it_conn_open(&c, s.port);
	struct it_response r;
	it_conn_tool(&c, NULL, "stuck-after", "report_damaged_bike",
		     "{\"bikeId\":\"" ST_BIKE "\",\"issue\":\"flat_tire\"}", &r);
	json_t *sc = json_object_get(json_object_get(r.json, "result"), "structuredContent");
	ck_assert_msg(r.status == 200 && json_object_get(sc, "reportId"), "%ld: %s", r.status,
		      r.body);
	it_response_free(&r);
	it_conn_close(&c);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

CHECK_SUITE(stalls)
{
	Suite *su = suite_create("stalls");
	TCase *tc = tcase_create("loop");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_write_stuck_behind_a_row_lock_never_starves_the_reads_of_its_loop);
	suite_add_tcase(su, tc);
	return su;
}
