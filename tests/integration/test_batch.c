/* Batched reads under attack (issue "One round trip per batch of calls"): marie (FR-PAR) and paul
 * (FR-LYO) call one server at once, 32 callers interleaved, so that their reads share batches (one
 * statement, one transaction): no answer outside the caller's perimeter and exactly one audit row
 * per call; a rights change honoured by every call begun after its commit; no answered call
 * without its row across a kill -9 or a COMMIT that fails; a call that raises in SQL failing
 * alone; rows handed to the wrong call (the test build bikaroo-mcp-swap-rows) refused and logged,
 * never sent. The callers hold real tokens of the test authorization server (tests/auth/as.mjs):
 * one server, several identities. */
#include <check.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define BATCH_CALLERS 32
#define BATCH_CLIENT "customer-care-assistant"
/* A FR-PAR bike that raises in SQL while the poison policy is installed (batch_poison_install);
 * no other call asks for it. */
#define BATCH_POISON 2990
/* A FR-PAR bike whose calls' audit rows fail at COMMIT while batch_uncommitted_install's trigger
 * is there. */
#define BATCH_UNCOMMITTED 2993
/* What the server logs when it refuses a row (domain/reads.c). */
#define BATCH_REFUSED_LOG "a row of another read; refused, not answered"

/* Regions of the demo bikes: VL-n is in batch_regions[n % 3] (migrations/demo/demo-data.sql). */
static const char *const batch_regions[3] = {"BE-BRU", "FR-LYO", "FR-PAR"};

static struct it_as batch_as; /* for the whole suite (unchecked fixture) */

/* The calls of the long load: 100,000 under `make test`. Under `make asan` and `make valgrind`,
 * where a call costs many times more, the Makefile sets fewer with IT_BATCH_CALLS (10,000 and
 * 2,000). */
static long batch_total(void)
{
	const char *v = getenv("IT_BATCH_CALLS");
	long n = v && *v ? strtol(v, NULL, 10) : 100000;
	return n < BATCH_CALLERS ? BATCH_CALLERS : n;
}

static bool batch_valgrind(void)
{
	return *it_env("BIKAROO_WRAPPER") != '\0';
}

/* What a call got. */
enum batch_kind {
	BK_SHOWN,    /* a bike's status */
	BK_REFUSED,  /* a tool error: not found, not permitted */
	BK_INTERNAL, /* a tool error: "could not be completed (internal)" */
	BK_UNAVAILABLE,
	BK_OTHER, /* anything else (no answer, another status) */
	BK_N
};
static const char *const batch_kind_name[BK_N] = {"shown", "refused", "internal", "unavailable",
						  "other"};

struct batch_seen {
	long long started_us, ended_us;
	bool shown;
};

/* One caller's account, written by its thread only. */
struct batch_tally {
	long kinds[BK_N];
	long wrong;      /* answers the rules forbid */
	char first[400]; /* the first of them */
	struct batch_seen *seen;
	size_t nseen, capseen;
	char **answered; /* ids of the calls answered with a result (new) */
	size_t nanswered, capanswered;
};

/* Who calls: even callers are who[0], odd ones who[1]. */
struct batch_who {
	const char *subject;
	int region; /* index in batch_regions: the caller's one region */
	char *token;
};

struct batch_run {
	struct batch_who who[2];
	bool own_only;     /* bikes of the caller's region only (else of every region) */
	int poison;        /* a bike who[0] asks for every fifth call (no other call does), or 0 */
	bool strict;       /* every call must get exactly the answer the rules give */
	bool record_times; /* keep each call's times (struct batch_seen) */
	bool record_ids;   /* keep the ids of answered calls */
	struct batch_tally t[BATCH_CALLERS];
	struct it_server s;
	char prefix[48]; /* of the calls' ids: letters and digits, unique per test and run */
	struct it_load l;
	long long began_us;
	/* once the load is over (batch_wait) */
	double seconds;
	long kinds[BK_N], calls;
	long wrong;        /* answers the rules forbid */
	const char *first; /* the first of them ("" when none) */
};

static void batch_serve(struct it_server *s, const char *bin);

/* A test's run: subjects a and b (regions as indexes in batch_regions) with their tokens, and a
 * server of its own (bin: the suffix of another build's name, or NULL); what starts its calls'
 * ids. Its flags are set before batch_go. */
static struct batch_run *batch_begin(const char *what, const char *a, int ra, const char *b, int rb,
				     const char *bin)
{
	struct batch_run *run = mem_calloc(1, sizeof *run);
	run->who[0] =
		(struct batch_who){a, ra, it_as_mint(&batch_as, a, BATCH_CLIENT, "fleet:read")};
	run->who[1] =
		(struct batch_who){b, rb, it_as_mint(&batch_as, b, BATCH_CLIENT, "fleet:read")};
	ck_assert_msg(run->who[0].token && run->who[1].token,
		      "no token from the authorization server");
	snprintf(run->prefix, sizeof run->prefix, "%s%ldp%d", what, (long)time(NULL),
		 (int)getpid());
	batch_serve(&run->s, bin);
	return run;
}

/* The server stopped cleanly (unless the test killed it: pid 0), the run freed. */
static void batch_end(struct batch_run *run)
{
	if (run->s.pid)
		ck_assert_int_eq(it_server_stop(&run->s), 0);
	for (int i = 0; i < BATCH_CALLERS; i++) {
		free(run->t[i].seen);
		for (size_t k = 0; k < run->t[i].nanswered; k++)
			free(run->t[i].answered[k]);
		free(run->t[i].answered);
	}
	free(run->who[0].token);
	free(run->who[1].token);
	free(run);
}

/* The bike a caller asks for at its n-th call: spread over the regions (or in its own). */
static int batch_bike(const struct batch_run *run, int caller, long n)
{
	if (run->poison && caller % 2 == 0 && n % 5 == 4)
		return run->poison;
	int bike = 1000 + (int)((caller * 389L + n * 7L) % 4000);
	if (run->own_only)
		while (bike % 3 != run->who[caller % 2].region)
			bike = bike + 1 > 4999 ? bike - 2 : bike + 1;
	return bike == run->poison ? bike + 3 : bike;
}

static void batch_prepare(void *ctx, struct it_load_call *c)
{
	const struct batch_run *run = ctx;
	c->token = run->who[c->caller % 2].token;
	snprintf(c->arguments, sizeof c->arguments, "{\"bikeId\":\"VL-%d\"}",
		 batch_bike(run, c->caller, c->n));
}

__attribute__((format(printf, 3, 4))) static void
batch_wrong(struct batch_tally *t, const struct it_load_call *c, const char *fmt, ...)
{
	if (t->wrong++)
		return;
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(t->first, sizeof t->first, "call %s (HTTP %ld): %s", c->id, c->r.status, what);
}

static enum batch_kind batch_kind_of(const struct it_load_call *c)
{
	json_t *result = json_object_get(c->r.json, "result");
	if (c->r.status == 503)
		return BK_UNAVAILABLE;
	if (c->r.status != 200 || !json_is_object(result))
		return BK_OTHER;
	if (!json_is_true(json_object_get(result, "isError")))
		return json_object_get(result, "structuredContent") ? BK_SHOWN : BK_OTHER;
	json_t *first = json_array_get(json_object_get(result, "content"), 0);
	const char *text = json_string_value(json_object_get(first, "text"));
	return text && strstr(text, "(internal)") ? BK_INTERNAL : BK_REFUSED;
}

static void *batch_grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	return mem_realloc(p, *cap * size);
}

/* Checks one answer against the rules (on the caller's thread). Whatever the test: a bike shown
 * is the one asked for, of the caller's region. Strict: a bike of the caller's region is shown,
 * another refused, the poisoned one fails alone. */
static void batch_check(void *ctx, const struct it_load_call *c)
{
	struct batch_run *run = ctx;
	struct batch_tally *t = &run->t[c->caller];
	const struct batch_who *w = &run->who[c->caller % 2];
	int bike = batch_bike(run, c->caller, c->n);
	bool inside = bike % 3 == w->region;
	enum batch_kind kind = batch_kind_of(c);
	t->kinds[kind]++;
	if (kind == BK_SHOWN) {
		json_t *sc =
			json_object_get(json_object_get(c->r.json, "result"), "structuredContent");
		const char *id = json_string_value(json_object_get(sc, "bikeId"));
		const char *region = json_string_value(json_object_get(sc, "region"));
		char want[16];
		snprintf(want, sizeof want, "VL-%d", bike);
		if (!id || strcmp(id, want) != 0 || !region ||
		    strcmp(region, batch_regions[w->region]) != 0 || !inside)
			batch_wrong(t, c, "%s (perimeter %s) asked for %s, was shown %s of %s",
				    w->subject, batch_regions[w->region], want, id ? id : "?",
				    region ? region : "?");
	}
	if (run->strict) {
		enum batch_kind want = bike == run->poison ? BK_INTERNAL
				       : inside            ? BK_SHOWN
							   : BK_REFUSED;
		if (kind != want)
			batch_wrong(t, c, "%s asked for VL-%d: %s, want %s", w->subject, bike,
				    batch_kind_name[kind], batch_kind_name[want]);
	}
	if (run->record_times) {
		t->seen = batch_grow(t->seen, &t->capseen, t->nseen, sizeof *t->seen);
		t->seen[t->nseen++] =
			(struct batch_seen){c->started_us, c->ended_us, kind == BK_SHOWN};
	}
	if (run->record_ids && c->r.status == 200 && json_object_get(c->r.json, "result")) {
		t->answered =
			batch_grow(t->answered, &t->capanswered, t->nanswered, sizeof *t->answered);
		t->answered[t->nanswered++] = mem_strdup(c->id);
	}
}

/* BATCH_CALLERS callers start, each making calls (0: no limit) until until_us (0: none). */
static void batch_go(struct batch_run *run, long calls, long long until_us)
{
	run->l = (struct it_load){.port = run->s.port,
				  .prefix = run->prefix,
				  .callers = BATCH_CALLERS,
				  .calls = calls,
				  .until_us = until_us,
				  .prepare = batch_prepare,
				  .check = batch_check,
				  .ctx = run};
	run->began_us = it_now_us();
	ck_assert_int_eq(it_load_start(&run->l), 0);
}

/* The load's end: the callers' accounts summed. */
static void batch_wait(struct batch_run *run)
{
	it_load_wait(&run->l);
	run->seconds = (double)(it_now_us() - run->began_us) / 1e6;
	run->first = "";
	for (int i = 0; i < BATCH_CALLERS; i++) {
		for (int k = 0; k < BK_N; k++) {
			run->kinds[k] += run->t[i].kinds[k];
			run->calls += run->t[i].kinds[k];
		}
		if (run->t[i].wrong && !run->wrong)
			run->first = run->t[i].first;
		run->wrong += run->t[i].wrong;
	}
}

static void batch_assert_no_wrong(const struct batch_run *run)
{
	ck_assert_msg(run->wrong == 0, "%ld answers break the rules; the first: %s", run->wrong,
		      run->first);
}

/* The server validating the authorization server's tokens, without volume limits (the subject
 * of test_abuse.c); bin: another build of the server, or NULL. */
static void batch_serve(struct it_server *s, const char *bin)
{
	char issuer[160], binenv[512];
	snprintf(issuer, sizeof issuer, "BIKAROO_AUTH_ISSUER=%s", batch_as.issuer);
	snprintf(binenv, sizeof binenv, "BIKAROO_BIN=%s%s", it_env("BIKAROO_BIN"), bin ? bin : "");
	const char *env[] = {"BIKAROO_AUTH=jwt",
			     issuer,
			     "BIKAROO_RESOURCE_URI=" IT_AS_RESOURCE,
			     "BIKAROO_AUTH_INSECURE_LOOPBACK=1",
			     "BIKAROO_RATE_READS=0",
			     binenv,
			     NULL};
	ck_assert_int_eq(it_server_start(s, env), 0);
}

/* sql's one value as a string (new), failing the test on a database error. */
static char *batch_sql(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "%s failed", sql);
	return v;
}

/* The transactions that committed the audit rows of the calls PREFIX-*, as
 * "transactions|rows|transactions holding rows of both subjects", by the rows' xmin. */
static char *batch_transactions(const char *prefix)
{
	char *sql = mem_printf("SELECT count(*) || '|' || coalesce(sum(n), 0) || '|' || count(*) "
			       "FILTER (WHERE s = 2) "
			       "FROM (SELECT count(*) AS n, count(DISTINCT subject) AS s FROM "
			       "fleet.audit_log WHERE "
			       "request_id LIKE '\"%s-%%' GROUP BY xmin::text) x",
			       prefix);
	char *v = batch_sql(sql);
	free(sql);
	return v;
}

START_TEST(marie_and_paul_in_the_same_batches_each_see_only_their_own)
{
	struct batch_run *run = batch_begin("mix", "marie", 2, "paul", 1, NULL);
	run->strict = true;
	long per = batch_total() / BATCH_CALLERS;
	batch_go(run, per, 0);
	batch_wait(run);
	char *tx = batch_transactions(run->prefix);
	fprintf(stderr,
		"batch: %ld calls in %.1f s (%.0f/s): %ld shown, %ld refused, %ld other; "
		"transactions|rows|mixed: %s\n",
		run->calls, run->seconds, (double)run->calls / run->seconds, run->kinds[BK_SHOWN],
		run->kinds[BK_REFUSED], run->calls - run->kinds[BK_SHOWN] - run->kinds[BK_REFUSED],
		tx);
	batch_assert_no_wrong(run);
	ck_assert_int_eq(run->calls, per * BATCH_CALLERS);
	/* Every call exactly one row (the ids are distinct: as many rows as ids, and as calls),
	 * each of its caller (even callers are marie) with the outcome its perimeter gives. */
	char *sql = mem_printf(
		"SELECT count(*) || '|' || count(DISTINCT request_id) || '|' || count(*) FILTER "
		"(WHERE subject <> CASE WHEN split_part(btrim(request_id, '\"'), '-', 2)::int %% 2 "
		"= 0 THEN 'marie' ELSE 'paul' END) || '|' || count(*) FILTER (WHERE outcome <> "
		"CASE "
		"WHEN substr(target, 4)::int %% 3 = CASE subject WHEN 'marie' THEN 2 ELSE 1 END "
		"THEN 'ok' ELSE 'not_found' END OR tool <> 'get_bike_status') FROM fleet.audit_log "
		"WHERE request_id LIKE '\"%s-%%'",
		run->prefix);
	char *rows = batch_sql(sql);
	char *want = mem_printf("%ld|%ld|0|0", run->calls, run->calls);
	ck_assert_msg(
		strcmp(rows, want) == 0,
		"audit rows|distinct ids|of another subject|with another outcome: %s, want %s",
		rows, want);
	/* The calls of both callers met in the same transactions. */
	long mixed = strtol(strrchr(tx, '|') + 1, NULL, 10);
	ck_assert_msg(mixed > 0, "no batch held calls of both marie and paul: %s", tx);
	free(want);
	free(rows);
	free(sql);
	free(tx);
	batch_end(run);
}
END_TEST

/* Per caller identity: calls begun after its change's commit that were still answered as
 * before (late), calls answered before the change (before), calls begun after it (after). */
static void batch_after_change(const struct batch_run *run, int who, long long commit_us,
			       long *late, long *before, long *after, long long *late_us)
{
	*late = *before = *after = 0;
	*late_us = 0;
	for (int i = who; i < BATCH_CALLERS; i += 2)
		for (size_t k = 0; k < run->t[i].nseen; k++) {
			const struct batch_seen *c = &run->t[i].seen[k];
			if (c->started_us > commit_us) {
				(*after)++;
				if (c->shown && !(*late)++)
					*late_us = c->started_us - commit_us;
			} else if (c->ended_us < commit_us && c->shown) {
				(*before)++;
			}
		}
}

/* Two changes committed while 32 callers read: rights-bystander loses its region (FR-LYO), then
 * rights-probe (FR-PAR) is deactivated. Each caller asks only for bikes of its own region: every
 * call begun after the change's commit returned must be refused, every one before it answered.
 * The rights are cached per database connection and validated by the rights epoch
 * (fleet.act_as): without that check the callers keep reading. */
START_TEST(a_rights_change_is_honoured_by_every_call_begun_after_its_commit)
{
	free(batch_sql(IT_RIGHTS_SETUP));
	struct batch_run *run = batch_begin("rc", "rights-probe", 2, "rights-bystander", 1, NULL);
	run->own_only = true;
	run->record_times = true;
	long step_ms = batch_valgrind() ? 4000 : 1000;
	batch_go(run, 0, it_now_us() + 3 * step_ms * 1000);
	/* Each change on a connection opened beforehand, its time taken as soon as its COMMIT
	 * returned. */
	PGconn *admin = PQconnectdb(it_env("IT_SUPER_URL"));
	ck_assert_int_eq(PQstatus(admin), CONNECTION_OK);
	static const char *const change[2] = {
		"UPDATE fleet.principals SET active = false WHERE subject = 'rights-probe'",
		"DELETE FROM fleet.principal_regions WHERE subject = 'rights-bystander'"};
	long long commit_us[2];
	for (int who = 1; who >= 0; who--) {
		it_sleep_ms(step_ms);
		PGresult *r = PQexec(admin, change[who]);
		commit_us[who] = it_now_us();
		ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK &&
				      strcmp(PQcmdTuples(r), "1") == 0,
			      "%s: %s", change[who], PQresultErrorMessage(r));
		PQclear(r);
	}
	PQfinish(admin);
	batch_wait(run);
	for (int who = 0; who < 2; who++) {
		long late, before, after;
		long long late_us;
		batch_after_change(run, who, commit_us[who], &late, &before, &after, &late_us);
		fprintf(stderr,
			"batch: %s: %ld calls answered before the change, %ld begun after\n",
			run->who[who].subject, before, after);
		ck_assert_msg(late == 0,
			      "%s: %ld calls begun after the change still read a bike, the first "
			      "%lld us after the commit",
			      run->who[who].subject, late, late_us);
		ck_assert_msg(before > 0 && after > 0, "%s: %ld calls before the change, %ld after",
			      run->who[who].subject, before, after);
	}
	batch_assert_no_wrong(run);
	batch_end(run);
	free(batch_sql(IT_RIGHTS_TEARDOWN));
}
END_TEST

/* The audit rows of the calls answered with a result (run->record_ids): returns how many such
 * calls there were. */
static size_t batch_answered_rows(const struct batch_run *run, struct it_audit_count *a)
{
	char **ids = NULL;
	size_t n = 0, cap = 0;
	for (int i = 0; i < BATCH_CALLERS; i++)
		for (size_t k = 0; k < run->t[i].nanswered; k++) {
			ids = batch_grow(ids, &cap, n, sizeof *ids);
			ids[n++] = run->t[i].answered[k];
		}
	ck_assert_int_eq(it_audit_count(run->prefix, ids, n, a), 0);
	free(ids);
	return n;
}

START_TEST(a_kill_during_the_mixed_load_leaves_no_answered_call_without_its_row)
{
	struct batch_run *run = batch_begin("kill", "marie", 2, "paul", 1, NULL);
	run->record_ids = true;
	batch_go(run, 0, it_now_us() + 60 * 1000000LL);
	it_sleep_ms(batch_valgrind() ? 5000 : 1000);
	kill(run->s.pid, SIGKILL);
	waitpid(run->s.pid, NULL, 0);
	run->s.pid = 0;
	batch_wait(run);
	struct it_audit_count a;
	size_t n = batch_answered_rows(run, &a);
	fprintf(stderr,
		"batch: %zu calls answered before the kill, %ld rows of theirs, %ld in all\n", n,
		a.of_ids, a.all);
	ck_assert_msg(n > BATCH_CALLERS, "only %zu calls answered before the kill", n);
	ck_assert_int_eq(a.of_ids, (long)n);
	/* Rows of calls whose answers the kill cut off may exist; never two for one call. */
	ck_assert_int_ge(a.all, a.of_ids);
	ck_assert_int_eq(a.doubled, 0);
	batch_assert_no_wrong(run);
	batch_end(run);
}
END_TEST

/* BATCH_POISON raises in SQL, as marie (FR-PAR, its region) reads it: a restrictive policy on
 * fleet.bikes calls a function that raises for that bike's row only (no other call reads it:
 * the bike-id condition, leakproof, is applied before the policy). it_batch.read(bike) says what
 * the login role reads of a bike as marie: its id, or "raised". */
#define BATCH_POISON_DROP                                                                          \
	"SET client_min_messages = warning; DROP POLICY IF EXISTS it_batch_poison ON "             \
	"fleet.bikes; "                                                                            \
	"DROP SCHEMA IF EXISTS it_batch CASCADE"
static void batch_poison_install(void)
{
	char *sql = mem_printf(
		BATCH_POISON_DROP
		"; CREATE SCHEMA it_batch; "
		"CREATE FUNCTION it_batch.poison(p_bike text) RETURNS boolean LANGUAGE plpgsql AS "
		"$$ "
		"BEGIN IF p_bike = 'VL-%d' THEN RAISE EXCEPTION 'poisoned bike %%', p_bike; END "
		"IF; "
		"RETURN true; END $$; "
		"CREATE FUNCTION it_batch.read(p_bike text) RETURNS text LANGUAGE plpgsql AS $$ "
		"BEGIN PERFORM fleet.act_as('marie', '" BATCH_CLIENT "'); "
		"RETURN (SELECT bike_id FROM fleet.bike_status_for(ARRAY[p_bike])); "
		"EXCEPTION WHEN raise_exception THEN RETURN 'raised'; END $$; "
		"GRANT USAGE ON SCHEMA it_batch TO fleet_app; "
		"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA it_batch TO fleet_app; "
		"CREATE POLICY it_batch_poison ON fleet.bikes AS RESTRICTIVE FOR SELECT "
		"USING (it_batch.poison(bike_id))",
		BATCH_POISON);
	free(batch_sql(sql));
	free(sql);
}

START_TEST(a_call_that_raises_in_sql_fails_alone_in_its_batch)
{
	batch_poison_install();
	/* The poison reaches the login role's reads, and only that bike's. */
	char *sql = mem_printf("SELECT it_batch.read('VL-2048') || '|' || it_batch.read('VL-%d')",
			       BATCH_POISON);
	char *v = it_sql_as_app(sql);
	ck_assert_str_eq(v ? v : "(error)", "VL-2048|raised");
	free(v);
	free(sql);
	struct batch_run *run = batch_begin("poison", "marie", 2, "paul", 1, NULL);
	run->s.reads_may_fall_back = true;
	run->strict = true;
	run->poison = BATCH_POISON;
	long per = batch_valgrind() ? 20 : 60;
	batch_go(run, per, 0);
	batch_wait(run);
	/* The poisoned calls' rows; the batches they were in, run again call by call: more calls
	 * than the poisoned ones (they shared their batches), each answered alone. */
	sql = mem_printf("SELECT count(*) FILTER (WHERE target = 'VL-%d' AND outcome = 'error') "
			 "|| '|' || count(*) FROM fleet.audit_log WHERE request_id LIKE "
			 "'\"%s-%%'",
			 BATCH_POISON, run->prefix);
	char *rows = batch_sql(sql);
	long split = it_metric(&run->s, "bikaroo_read_calls_run_alone_total");
	fprintf(stderr,
		"batch: %ld calls, %ld poisoned (internal), %ld shown, %ld refused; "
		"poisoned rows|rows: %s; calls run again alone: %ld\n",
		run->calls, run->kinds[BK_INTERNAL], run->kinds[BK_SHOWN], run->kinds[BK_REFUSED],
		rows, split);
	batch_assert_no_wrong(run);
	long poisoned = BATCH_CALLERS / 2 * (per / 5);
	ck_assert_int_eq(run->kinds[BK_INTERNAL], poisoned);
	char *want = mem_printf("%ld|", poisoned);
	ck_assert_msg(strncmp(rows, want, strlen(want)) == 0, "poisoned rows: %s", rows);
	ck_assert_msg(split > poisoned,
		      "no poisoned call shared its batch with another: %ld calls "
		      "run alone, %ld poisoned",
		      split, poisoned);
	ck_assert_int_eq(strtol(strrchr(rows, '|') + 1, NULL, 10), per * BATCH_CALLERS);
	free(want);
	free(rows);
	free(sql);
	batch_end(run);
	free(batch_sql(BATCH_POISON_DROP));
}
END_TEST

/* A batch whose statement returned its rows but whose COMMIT failed: a deferred constraint
 * trigger on fleet.audit_log raises at commit for BATCH_UNCOMMITTED's rows, after the batch's
 * statement has sent its rows and its end. None of that batch's calls may be answered: a read
 * answers only once its row has committed. */
static void batch_uncommitted_install(void)
{
	char *sql = mem_printf(
		BATCH_POISON_DROP
		"; CREATE SCHEMA it_batch; GRANT USAGE ON SCHEMA it_batch TO PUBLIC; "
		"CREATE FUNCTION it_batch.uncommitted() RETURNS trigger LANGUAGE plpgsql AS $$ "
		"BEGIN IF NEW.target = 'VL-%d' THEN RAISE EXCEPTION 'refused at commit'; END IF; "
		"RETURN NULL; END $$; "
		"CREATE CONSTRAINT TRIGGER it_batch_uncommitted AFTER INSERT ON fleet.audit_log "
		"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "
		"it_batch.uncommitted()",
		BATCH_UNCOMMITTED);
	free(batch_sql(sql));
	free(sql);
}

START_TEST(a_batch_whose_commit_fails_answers_none_of_its_calls)
{
	batch_uncommitted_install();
	struct batch_run *run = batch_begin("commit", "marie", 2, "paul", 1, NULL);
	run->s.reads_may_fall_back = true;
	run->poison = BATCH_UNCOMMITTED;
	run->record_ids = true;
	long per = batch_valgrind() ? 20 : 60;
	batch_go(run, per, 0);
	batch_wait(run);
	struct it_audit_count a;
	size_t n = batch_answered_rows(run, &a);
	fprintf(stderr,
		"batch: commit refused: %ld calls, %zu answered (%ld rows of theirs), %ld "
		"unavailable, %ld other\n",
		run->calls, n, a.of_ids, run->kinds[BK_UNAVAILABLE], run->kinds[BK_OTHER]);
	batch_assert_no_wrong(run);
	ck_assert_int_eq(a.of_ids, (long)n);
	ck_assert_int_eq(a.all, a.of_ids);
	ck_assert_int_ge(run->kinds[BK_UNAVAILABLE], BATCH_CALLERS / 2 * (per / 5));
	batch_end(run);
	free(batch_sql(BATCH_POISON_DROP));
}
END_TEST

/* bikaroo-mcp-swap-rows hands the first two reads of every batch each other's rows: each of them
 * must be refused (the echo of subject, client and reference is not theirs) and logged, never
 * answered with the other's bike. Without the echo check, marie reads paul's bikes. */
START_TEST(rows_handed_to_the_wrong_call_are_refused_and_logged_never_sent)
{
	struct batch_run *run = batch_begin("swap", "marie", 2, "paul", 1, "-swap-rows");
	batch_go(run, batch_valgrind() ? 20 : 100, 0);
	batch_wait(run);
	long logged = it_log_count(&run->s, BATCH_REFUSED_LOG);
	fprintf(stderr,
		"batch: swapped rows: %ld calls, %ld refused as internal (%ld logged), %ld shown, "
		"%ld refused\n",
		run->calls, run->kinds[BK_INTERNAL], logged, run->kinds[BK_SHOWN],
		run->kinds[BK_REFUSED]);
	batch_assert_no_wrong(run);
	ck_assert_msg(run->kinds[BK_INTERNAL] > 0,
		      "no batch of two reads or more: nothing swapped");
	ck_assert_int_eq(logged, run->kinds[BK_INTERNAL]);
	ck_assert_int_eq(run->kinds[BK_OTHER] + run->kinds[BK_UNAVAILABLE], 0);
	batch_end(run);
}
END_TEST

static void batch_setup(void)
{
	it_as_start(&batch_as, "jwt");
}

/* In the parent process, whatever the tests did: the authorization server stopped, the
 * database as the tests found it. */
static void batch_teardown(void)
{
	it_as_stop(&batch_as);
	free(it_sql(BATCH_POISON_DROP));
	free(it_sql(IT_RIGHTS_TEARDOWN));
}

CHECK_SUITE(batch)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batched reads");
	tcase_add_unchecked_fixture(tc, batch_setup, batch_teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, marie_and_paul_in_the_same_batches_each_see_only_their_own);
	tcase_add_test(tc, a_rights_change_is_honoured_by_every_call_begun_after_its_commit);
	tcase_add_test(tc, a_kill_during_the_mixed_load_leaves_no_answered_call_without_its_row);
	tcase_add_test(tc, a_call_that_raises_in_sql_fails_alone_in_its_batch);
	tcase_add_test(tc, a_batch_whose_commit_fails_answers_none_of_its_calls);
	tcase_add_test(tc, rows_handed_to_the_wrong_call_are_refused_and_logged_never_sent);
	suite_add_tcase(s, tc);
	return s;
}
