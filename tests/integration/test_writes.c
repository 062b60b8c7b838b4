/* Integration tests of the write pattern in SQL (migrations/README.md, "A write function"), called
 * as the server's login role on the real PostgreSQL: who may use a capability (fleet.may_use, by
 * its row of fleet.capabilities), the write right that write_begin fixes and row-level security
 * holds writes to, the confirmation policies (write_asks), idempotency (write_begin claims the
 * key, write_done keeps the result: replay, conflict, the key's lock between two sessions),
 * report_damaged_bike_as's outcomes with their audit rows,
 * the reads that answer nothing to a role their capability does not list, and migrate making
 * fleet.capabilities the declared rows. */
#include <check.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* Capability rows of these tests' own (deleted by the fixture), and FR-PAR demo bikes no other
 * suite writes: VL-4607 is in repair, the others available; VL-4603 is in FR-LYO. */
#define WR_CAPS "it_writes_%%" /* a LIKE pattern, in printf formats */
#define WR_BIKE_OK "VL-4601"
#define WR_BIKE_CASE "VL-4604"
#define WR_BIKE_REPAIR "VL-4607"
#define WR_BIKE_OPS "VL-4610"
#define WR_BIKE_ASK "VL-4613"
#define WR_BIKE_LYO "VL-4603"
#define WR_BIKE_LEGACY "VL-4616"

static char *wr_vsql(bool app, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static char *wr_vsql(bool app, const char *fmt, va_list ap)
{
	char *sql = mem_alloc(8192);
	vsnprintf(sql, 8192, fmt, ap);
	char *v = app ? it_sql_as_app(sql) : it_sql(sql);
	free(sql);
	return v;
}

/* As the login role (fleet_app), all statements in one transaction: the first column of the
 * last result (new string), or NULL when the database refused it. */
static char *wr_app(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *wr_app(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = wr_vsql(true, fmt, ap);
	va_end(ap);
	return v;
}

/* As the superuser, for setting up and looking: fails the test when the database refuses. */
static char *wr_super(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *wr_super(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = wr_vsql(false, fmt, ap);
	va_end(ap);
	ck_assert_msg(v != NULL, "the superuser's SQL failed (%s)", fmt);
	return v;
}

/* Asserts that the query's value, as the login role, is want; what names the check. */
static void wr_expect_app(const char *want, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void wr_expect_app(const char *want, const char *what, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *got = wr_vsql(true, fmt, ap);
	va_end(ap);
	ck_assert_msg(got && strcmp(got, want) == 0, "%s: got %s, want %s", what,
		      got ? got : "(refused)", want);
	free(got);
}

/* The rows of fleet.capabilities as migrate left them, as statements that give them back: taken
 * once before the tests (in the parent process, so that every test's process has them), run
 * before each test and after the last, also when a test failed half-way. */
static char *wr_restore;

static void wr_clean(void)
{
	if (wr_restore && *wr_restore)
		free(wr_super("%s", wr_restore));
	free(wr_super("DELETE FROM fleet.capabilities WHERE name LIKE '" WR_CAPS "';"
		      "DELETE FROM fleet.client_apps WHERE client_id = 'it-writes-noread'"));
}

static void wr_suite_setup(void)
{
	wr_restore =
		wr_super("SELECT string_agg(format('UPDATE fleet.capabilities SET roles = %%L,"
			 " scope = %%L, people_only = %%L, confirmation = %%L WHERE name = %%L',"
			 " roles, scope, people_only, confirmation, name), ';')"
			 " FROM fleet.capabilities WHERE name NOT LIKE '" WR_CAPS "'");
}

static void wr_suite_teardown(void)
{
	wr_clean();
	free(wr_restore);
	wr_restore = NULL;
}

static void wr_setup(void)
{
	wr_clean();
	free(wr_super("INSERT INTO fleet.client_apps (client_id, name, may_read, may_report)"
		      " VALUES ('it-writes-noread', 'Reports, never reads', false, true)"));
}

/* ---- who may use a capability ------------------------------------------------------------ */

/* One true/false per (n, capability, subject, client) of the VALUES list, in n's order:
 * fleet.may_use of the caller's rights as fleet.act_as resolves them. */
#define WR_MAY_USE_GRID                                                                            \
	"SELECT string_agg(fleet.may_use(g.cap, (SELECT fleet.act_as(g.subject, "                  \
	"g.client)))::text,"                                                                       \
	" ' ' ORDER BY g.n) FROM (VALUES %s) AS g(n, cap, subject, client)"

START_TEST(may_use_follows_roles_people_and_the_client_right)
{
	free(wr_super(
		"INSERT INTO fleet.capabilities (name, roles, scope, people_only, confirmation) "
		"VALUES"
		" ('it_writes_cc', '{customer_care}', 'fleet:report', true, 'never'),"
		" ('it_writes_any', '{customer_care}', 'fleet:report', false, 'never'),"
		" ('it_writes_read', '{viewer,customer_care}', 'fleet:read', false, 'never')"));
	/* The role: customer_care yes, fleet_operator and viewer no. */
	wr_expect_app("true false false", "roles", WR_MAY_USE_GRID,
		      "(1, 'it_writes_cc', 'marie', 'customer-care-assistant'),"
		      " (2, 'it_writes_cc', 'olivia', 'ops-assistant'),"
		      " (3, 'it_writes_cc', 'dev', 'customer-care-assistant')");
	/* People only: the machine principal fleet-sync (customer_care) only where it is not. */
	wr_expect_app("false true", "people only", WR_MAY_USE_GRID,
		      "(1, 'it_writes_cc', 'fleet-sync', 'fleet-sync'),"
		      " (2, 'it_writes_any', 'fleet-sync', 'fleet-sync')");
	/* The client application's right of the capability's scope: developer-ide reads but
	 * never reports; it-writes-noread reports but never reads. */
	wr_expect_app("false true true false", "client rights", WR_MAY_USE_GRID,
		      "(1, 'it_writes_cc', 'marie', 'developer-ide'),"
		      " (2, 'it_writes_read', 'marie', 'developer-ide'),"
		      " (3, 'it_writes_cc', 'marie', 'it-writes-noread'),"
		      " (4, 'it_writes_read', 'marie', 'it-writes-noread')");
	/* Fail closed: an unknown capability, subject or client, no rights at all. */
	wr_expect_app("false false false", "unknown", WR_MAY_USE_GRID,
		      "(1, 'it_writes_none', 'marie', 'customer-care-assistant'),"
		      " (2, 'it_writes_cc', 'nobody', 'customer-care-assistant'),"
		      " (3, 'it_writes_cc', 'marie', 'unregistered-app')");
	wr_expect_app("f", "no rights", "SELECT fleet.may_use('it_writes_any', NULL)");
}
END_TEST

/* ---- the write right under row-level security -------------------------------------------- */

/* A fleet.write_call of subject through client to tool, with key (SQL: NULL or a literal),
 * the digest repeat(digest, 64) and the request id "it-writes-<id>", target the bike. */
#define WR_CALL(subject, client, args, tool, key, digest, id, confirmed)                           \
	"('" subject "', '" client "', '" args "', '" tool "', " key ", repeat('" digest "', 64)," \
	" 'it-writes-" id "', " confirmed ", NULL, NULL, NULL, NULL)::fleet.write_call"
#define WR_OLIVIA_CALL                                                                             \
	WR_CALL("olivia", "ops-assistant", "{}", "it_tool", "NULL", "a", "rls", "false")
#define WR_MARIE_CALL                                                                              \
	WR_CALL("marie", "customer-care-assistant", "{}", "it_tool", "NULL", "a", "rls", "false")

/* An idempotency record stamped as olivia (ops-assistant) in FR-PAR, after prologue, in a
 * transaction never committed: "written" when row-level security admitted it, NULL when it
 * refused it. */
static char *wr_try_write(const char *prologue)
{
	return wr_app(
		"BEGIN; %s; INSERT INTO fleet.idempotent_calls (subject, idem_key, tool,"
		" args_digest, client_id, region, result, recorded_at) VALUES ('olivia',"
		" 'it-writes-rls', 'it_tool', repeat('0', 64), 'ops-assistant', 'FR-PAR', '{}',"
		" now()) RETURNING 'written'",
		prologue);
}

START_TEST(write_begin_fixes_the_right_the_write_policies_require)
{
	free(wr_super(
		"INSERT INTO fleet.capabilities (name, roles, scope, people_only, confirmation)"
		" VALUES ('it_writes_care', '{customer_care}', 'fleet:report', true, 'never')"));
	char *v = wr_try_write("SELECT fleet.write_begin('damage_report', " WR_OLIVIA_CALL ")");
	ck_assert_str_eq(v ? v : "(refused)", "written");
	free(v);
	wr_expect_app("on", "the setting",
		      "SELECT fleet.write_begin('damage_report', " WR_OLIVIA_CALL ");"
		      " SELECT current_setting('app.may_report')");
	wr_expect_app("-", "no answer yet: the write goes on",
		      "SELECT coalesce((fleet.write_begin('damage_report', " WR_OLIVIA_CALL
		      ")).answer.outcome, '-')");
	/* The very same row is refused after: a capability whose roles do not list olivia's,
	 * an unknown one, no write_begin at all, and another caller's write_begin (a new
	 * identity starts without the right, whether its rights are resolved or cached). */
	static const char *const refused[] = {
		"SELECT fleet.write_begin('it_writes_care', " WR_OLIVIA_CALL ")",
		"SELECT fleet.write_begin('it_writes_none', " WR_OLIVIA_CALL ")",
		"SELECT fleet.act_as('olivia', 'ops-assistant')",
		"SELECT fleet.write_begin('damage_report', " WR_MARIE_CALL ");"
		" SELECT fleet.act_as('olivia', 'ops-assistant')",
		"SELECT fleet.act_as('olivia', 'ops-assistant');"
		" SELECT fleet.write_begin('damage_report', " WR_MARIE_CALL ");"
		" SELECT fleet.act_as('olivia', 'ops-assistant')"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		v = wr_try_write(refused[i]);
		ck_assert_msg(v == NULL, "written after %s", refused[i]);
	}
	/* Refused, the state carries the answer: forbidden, with its audit row. */
	wr_expect_app("forbidden", "forbidden",
		      "SELECT (fleet.write_begin('it_writes_care', " WR_OLIVIA_CALL
		      ")).answer.outcome");
	char *n = wr_super("SELECT count(*) FROM fleet.idempotent_calls WHERE idem_key ="
			   " 'it-writes-rls'");
	ck_assert_str_eq(n, "0");
	free(n);
}
END_TEST

/* ---- confirmation policies ---------------------------------------------------------------- */

START_TEST(write_asks_follows_the_declared_policy)
{
	free(wr_super(
		"INSERT INTO fleet.capabilities (name, roles, scope, people_only, confirmation) "
		"VALUES"
		" ('it_writes_never', '{customer_care}', 'fleet:report', true, 'never'),"
		" ('it_writes_always', '{customer_care}', 'fleet:report', true, 'always'),"
		" ('it_writes_client', '{customer_care}', 'fleet:report', true, 'client'),"
		" ('it_writes_condition', '{customer_care}', 'fleet:report', true, 'condition')"));
	/* Per row: the capability, the client (careful-assistant requires confirmation,
	 * customer-care-assistant does not), confirmed, the write's condition; then the version
	 * the confirmed question named and the write's version now: a yes to another version asks
	 * again, whatever the policy; a yes without one (a direct caller) does not. */
	wr_expect_app(
		"f f t f f t f f t f t f t t t f f t", "policies",
		"SELECT string_agg(CASE WHEN fleet.write_asks((g.cap, ('marie', g.client,"
		" '{}', 'it_tool', NULL, NULL, NULL, g.confirmed, NULL, NULL, NULL, g.sealed),"
		" fleet.act_as('marie', g.client), NULL)::fleet.write_state, g.cond, g.now)"
		" THEN 't' ELSE 'f' END, ' ' ORDER BY g.n) FROM (VALUES"
		" (1, 'it_writes_never', 'careful-assistant', false, true, NULL, NULL),"
		" (2, 'it_writes_never', 'customer-care-assistant', false, false, NULL, NULL),"
		" (3, 'it_writes_always', 'customer-care-assistant', false, false, NULL, NULL),"
		" (4, 'it_writes_always', 'customer-care-assistant', true, false, NULL, NULL),"
		" (5, 'it_writes_client', 'customer-care-assistant', false, true, NULL, NULL),"
		" (6, 'it_writes_client', 'careful-assistant', false, false, NULL, NULL),"
		" (7, 'it_writes_client', 'careful-assistant', true, false, NULL, NULL),"
		" (8, 'it_writes_condition', 'careful-assistant', false, false, NULL, NULL),"
		" (9, 'it_writes_condition', 'customer-care-assistant', false, true, NULL,"
		" NULL),"
		" (10, 'it_writes_condition', 'customer-care-assistant', true, true, NULL, NULL),"
		" (11, 'it_writes_condition', 'customer-care-assistant', false, NULL, NULL,"
		" NULL),"
		" (12, 'it_writes_none', 'customer-care-assistant', true, false, NULL, NULL),"
		" (13, 'it_writes_none', 'customer-care-assistant', false, false, NULL, NULL),"
		" (14, 'it_writes_none', 'customer-care-assistant', NULL, false, NULL, NULL),"
		" (15, 'it_writes_always', 'customer-care-assistant', true, false, '7@1', '9@2'),"
		" (16, 'it_writes_always', 'customer-care-assistant', true, false, '9@2', '9@2'),"
		" (17, 'it_writes_always', 'customer-care-assistant', true, false, NULL, '9@2'),"
		" (18, 'it_writes_never', 'customer-care-assistant', true, false, '7@1', NULL))"
		" AS g(n, cap, client, confirmed, cond, sealed, now)");
	/* The condition's default is false. */
	wr_expect_app(
		"f", "default condition",
		"SELECT fleet.write_asks(('it_writes_condition', " WR_MARIE_CALL ","
		" fleet.act_as('marie', 'customer-care-assistant'), NULL)::fleet.write_state)");
}
END_TEST

/* ---- idempotency: the key claimed by write_begin, kept by write_done ----------------------- */

/* marie's call of it_tool with key and digest: "outcome result" of write_begin's answer
 * ("- -" for none: go on), after prologue, in one transaction as the login role. */
#define WR_CLAIM(key, tool, digest)                                                                \
	"SELECT coalesce((w).answer.outcome, '-') || ' ' || coalesce((w).answer.result::text, "    \
	"'-')"                                                                                     \
	" FROM fleet.write_begin('damage_report', " WR_CALL("marie", "customer-care-assistant",    \
							    "{}", tool, "'" key "'", digest,       \
							    "claim", "false") ") w"
#define WR_KEEP(key, region, result)                                                               \
	"SELECT fleet.write_done(fleet.write_begin('damage_report', " WR_CALL(                     \
		"marie", "customer-care-assistant", "{}", "it_tool", key, "a", "keep",             \
		"false") "), '" region "', '" result "')"

START_TEST(the_key_is_claimed_kept_replayed_and_refused_for_another_call)
{
	free(wr_super("DELETE FROM fleet.idempotent_calls WHERE idem_key LIKE 'it-writes-k%%'"));
	wr_expect_app("- -", "a new key", WR_CLAIM("it-writes-k1", "it_tool", "a"));
	/* Kept by write_done in the claim's transaction, replayed from then on. */
	wr_expect_app("replayed {\"done\": 1}", "kept",
		      WR_KEEP("'it-writes-k1'", "FR-PAR",
			      "{\"done\": 1}") "; " WR_CLAIM("it-writes-k1", "it_tool", "a"));
	wr_expect_app("replayed {\"done\": 1}", "replayed",
		      WR_CLAIM("it-writes-k1", "it_tool", "a"));
	wr_expect_app("key_conflict -", "other arguments",
		      WR_CLAIM("it-writes-k1", "it_tool", "b"));
	wr_expect_app("key_conflict -", "another tool", WR_CLAIM("it-writes-k1", "it_other", "a"));
	/* Keys are their subject's: olivia's k1 is new. */
	wr_expect_app("-", "another subject",
		      "SELECT coalesce((fleet.write_begin('damage_report', " WR_CALL(
			      "olivia", "ops-assistant", "{}", "it_tool", "'it-writes-k1'", "a",
			      "claim", "false") ")).answer.outcome, '-')");
	/* A key kept in a region the caller no longer sees replays as not found. */
	free(wr_super("UPDATE fleet.idempotent_calls SET region = 'FR-LYO' WHERE subject = 'marie'"
		      " AND idem_key = 'it-writes-k1'"));
	wr_expect_app("not_found -", "out of the perimeter",
		      WR_CLAIM("it-writes-k1", "it_tool", "a"));
	/* No key: nothing kept. */
	wr_expect_app("0", "no key",
		      "BEGIN; " WR_KEEP("NULL", "FR-PAR", "{}") "; SELECT count(*) FROM"
								" fleet.idempotent_calls WHERE"
								" recorded_at >= now()");
	/* Kept only with the write right, in the perimeter. */
	static const char *const refused[] = {
		"SELECT fleet.write_done(('damage_report', " WR_CALL(
			"marie", "customer-care-assistant", "{}", "it_tool", "'it-writes-k2'", "a",
			"keep", "false") ", fleet.act_as('marie', 'customer-care-assistant'),"
					 " NULL)::fleet.write_state, 'FR-PAR', '{}')",
		WR_KEEP("'it-writes-k3'", "FR-LYO", "{}")};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char *v = wr_app("%s", refused[i]);
		ck_assert_msg(v == NULL, "kept: %s", refused[i]);
	}
	char *n = wr_super("SELECT string_agg(subject || ':' || idem_key || ':' || tool, ' ')"
			   " FROM fleet.idempotent_calls WHERE idem_key LIKE 'it-writes-k%%'");
	ck_assert_str_eq(n, "marie:it-writes-k1:it_tool");
	free(n);
	/* Each stop left its audit row: two replays, two conflicts, one not found. */
	n = wr_super("SELECT string_agg(outcome || ':' || count, ' ' ORDER BY outcome) FROM"
		     " (SELECT outcome, count(*) FROM fleet.audit_log WHERE request_id ="
		     " 'it-writes-claim' AND subject = 'marie' GROUP BY outcome) a");
	ck_assert_str_eq(n, "conflict:2 not_found:1 replayed:2");
	free(n);
}
END_TEST

/* Runs sql on pg (borrowed), failing the test unless it succeeds. */
static void wr_exec(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK,
		      "%s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
}

/* Two sessions claim one key: the second waits for the first's transaction (the key's lock),
 * then sees what it kept. */
START_TEST(the_key_lock_serializes_two_sessions)
{
	free(wr_super("DELETE FROM fleet.idempotent_calls WHERE idem_key = 'it-writes-race'"));
	PGconn *a = PQconnectdb(it_env("DATABASE_URL")), *b = PQconnectdb(it_env("DATABASE_URL"));
	ck_assert_int_eq(PQstatus(a), CONNECTION_OK);
	ck_assert_int_eq(PQstatus(b), CONNECTION_OK);
	wr_exec(a,
		"BEGIN; CREATE TEMP TABLE w AS SELECT fleet.write_begin('damage_report', " WR_CALL(
			"marie", "customer-care-assistant", "{}", "it_tool", "'it-writes-race'",
			"a", "race", "false") ") AS w");
	ck_assert_int_eq(PQsendQuery(b, WR_CLAIM("it-writes-race", "it_tool", "a")), 1);
	/* b waits on the advisory lock a holds (bounded: 10 s). */
	char *waiting = NULL;
	for (int poll = 0; poll < 200; poll++) {
		free(waiting);
		waiting = wr_super("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
				   " AND NOT granted AND pid = %d",
				   PQbackendPID(b));
		if (strcmp(waiting, "1") == 0)
			break;
		it_sleep_ms(50);
	}
	ck_assert_str_eq(waiting, "1");
	free(waiting);
	ck_assert_int_eq(PQconsumeInput(b), 1);
	ck_assert_int_eq(PQisBusy(b), 1);
	wr_exec(a, "SELECT fleet.write_done(w, 'FR-PAR', '{\"first\": true}') FROM w; COMMIT");
	char *got = NULL;
	for (PGresult *r; (r = PQgetResult(b)) != NULL; PQclear(r))
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
			free(got);
			got = mem_strdup(PQgetvalue(r, 0, 0));
		}
	ck_assert_str_eq(got ? got : "(none)", "replayed {\"first\": true}");
	free(got);
	PQfinish(a);
	PQfinish(b);
}
END_TEST

/* ---- report_damaged_bike_as -------------------------------------------------------------- */

/* One call of fleet.report_damaged_bike_as as the login role, its request id "it-writes-<id>":
 * "outcome|region|bike_id|status|report_id|case_id|effect" (the last four of the result), NULLs
 * as "" (new string; "(refused)" when the call raised). key is SQL (NULL or a literal). */
static char *wr_report(const char *subject, const char *client, const char *args, const char *key,
		       char digest, const char *id, bool confirmed)
{
	char *v = wr_app(
		"SELECT concat_ws('|', coalesce(outcome, ''), coalesce(region, ''),"
		" coalesce(result->>'bike_id', ''), coalesce(result->>'status', ''),"
		" coalesce(result->>'report_id', ''), coalesce(result->>'case_id', ''),"
		" coalesce(effect, '')) FROM fleet.report_damaged_bike_as(('%s', '%s', '%s',"
		" 'report_damaged_bike', %s, repeat('%c', 64), 'it-writes-%s', %s, NULL, NULL,"
		" NULL, NULL)::fleet.write_call)",
		subject, client, args, key, digest, id, confirmed ? "true" : "false");
	return v ? v : mem_strdup("(refused)");
}

/* Field n (from 0) of a wr_report row, copied into out. */
static const char *wr_field(const char *row, int n, char *out, size_t cap)
{
	const char *p = row;
	for (int i = 0; i < n && p; i++)
		p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
	size_t len = p ? strcspn(p, "|") : 0;
	snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), p ? p : "");
	return out;
}

/* What the business tables hold (not the audit log): equal before and after = nothing was
 * written. */
#define WR_SNAPSHOT                                                                                \
	"SELECT md5(concat_ws('|',"                                                                \
	" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.damage_reports t),"         \
	" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.cases t),"                  \
	" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.case_events t),"            \
	" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.idempotent_calls t),"       \
	" (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM fleet.bikes t)))"

#define WR_ARGS(bike, issue) "{\"bikeId\": \"" bike "\", \"issue\": \"" issue "\"}"

START_TEST(report_files_extends_replays_and_refuses_a_reused_key)
{
	char key[64], sql_key[80], rep[64], cse[64];
	static const char filed[] = "ok|FR-PAR|" WR_BIKE_OK "|unavailable|DR-";
	snprintf(key, sizeof key, "it-writes-report-%d", (int)getpid());
	snprintf(sql_key, sizeof sql_key, "'%s'", key);
	/* Filed: a report, the bike unavailable, a new case. */
	char *first = wr_report("marie", "customer-care-assistant",
				WR_ARGS(WR_BIKE_OK, "flat_tire"), "NULL", '1', "ok", false);
	ck_assert_msg(strncmp(first, filed, strlen(filed)) == 0, "%s", first);
	wr_field(first, 4, rep, sizeof rep);
	wr_field(first, 5, cse, sizeof cse);
	ck_assert_msg(strncmp(cse, "IC-", 3) == 0, "%s", first);
	char *row = wr_super("SELECT concat_ws(',', r.bike_id, r.region, r.case_id, r.issue,"
			     " r.status_before, r.status_after, r.reported_by, r.reported_via,"
			     " b.status) FROM fleet.damage_reports r JOIN fleet.bikes b USING"
			     " (bike_id) WHERE r.report_id = '%s'",
			     rep);
	char want[256];
	snprintf(want, sizeof want,
		 WR_BIKE_OK ",FR-PAR,%s,flat_tire,available,unavailable,marie,"
			    "customer-care-assistant,unavailable",
		 cse);
	ck_assert_str_eq(row, want);
	free(row);
	/* With a key: the bike's open case extended. */
	char *second =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_OK, "brake_failure"),
			  sql_key, '2', "keyed", false);
	wr_field(second, 4, rep, sizeof rep);
	snprintf(want, sizeof want, "ok|FR-PAR|" WR_BIKE_OK "|unavailable|%s|%s|", rep, cse);
	ck_assert_str_eq(second, want);
	char *snap = wr_super(WR_SNAPSHOT);
	/* The same key and digest: the first result, its time included, nothing written. */
	char *replay =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_OK, "brake_failure"),
			  sql_key, '2', "replay", false);
	snprintf(want, sizeof want, "replayed|FR-PAR|" WR_BIKE_OK "|unavailable|%s|%s|", rep, cse);
	ck_assert_str_eq(replay, want);
	char *rec = wr_app("SELECT result->>'recorded_at' FROM fleet.report_damaged_bike_as(("
			   "'marie', 'customer-care-assistant', '%s', 'report_damaged_bike', '%s',"
			   " repeat('2', 64), 'it-writes-replay-at', false, NULL, NULL,"
			   " NULL, NULL)::fleet.write_call)",
			   WR_ARGS(WR_BIKE_OK, "brake_failure"), key);
	char *rec_first = wr_super("SELECT result->>'recorded_at' FROM fleet.idempotent_calls"
				   " WHERE idem_key = '%s'",
				   key);
	ck_assert_str_ne(rec_first, "");
	ck_assert_str_eq(rec ? rec : "(refused)", rec_first);
	/* The same key with other arguments: a conflict, nothing written. */
	char *conflict =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_OK, "flat_tire"),
			  sql_key, '3', "conflict", false);
	ck_assert_str_eq(conflict, "key_conflict||||||");
	char *snap2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap, snap2);
	/* Each outcome left its audit row. */
	char *audit = wr_super("SELECT string_agg(request_id || '=' || outcome || ':' ||"
			       " coalesce(report_id, '-'), ' ' ORDER BY audit_id) FROM"
			       " fleet.audit_log WHERE request_id IN ('it-writes-keyed',"
			       " 'it-writes-replay', 'it-writes-conflict')");
	snprintf(want, sizeof want,
		 "it-writes-keyed=ok:%s it-writes-replay=replayed:%s it-writes-conflict=conflict:-",
		 rep, rep);
	ck_assert_str_eq(audit, want);
	free(audit);
	free(snap2);
	free(conflict);
	free(rec_first);
	free(rec);
	free(replay);
	free(snap);
	free(second);
	free(first);
}
END_TEST

/* A key the previous release's report recorded in fleet.idempotency_keys while this release's
 * migrate ran (after 0018 copied that table, before the new function texts) still replays. */
START_TEST(report_replays_a_key_the_previous_release_recorded)
{
	char key[64], rep[64], cse[64], want[256];
	snprintf(key, sizeof key, "it-writes-legacy-%d", (int)getpid());
	char *filed =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_LEGACY, "flat_tire"),
			  "NULL", '1', "legacy-0", false);
	wr_field(filed, 4, rep, sizeof rep);
	wr_field(filed, 5, cse, sizeof cse);
	ck_assert_msg(strncmp(filed, "ok|", 3) == 0, "%s", filed);
	free(wr_super("INSERT INTO fleet.idempotency_keys (subject, idem_key, tool, args_digest,"
		      " client_id, region, bike_id, report_id, case_id, status, recorded_at)"
		      " SELECT 'marie', '%s', 'report_damaged_bike', repeat('d', 64),"
		      " 'customer-care-assistant', region, bike_id, report_id, case_id,"
		      " status_after, recorded_at FROM fleet.damage_reports WHERE report_id = '%s'",
		      key, rep));
	char *snap = wr_super(WR_SNAPSHOT);
	char *sql_key = mem_printf("'%s'", key);
	char *again =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_LEGACY, "flat_tire"),
			  sql_key, 'd', "legacy-1", false);
	snprintf(want, sizeof want, "replayed|FR-PAR|" WR_BIKE_LEGACY "|unavailable|%s|%s|", rep,
		 cse);
	ck_assert_str_eq(again, want);
	char *other =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_LEGACY, "flat_tire"),
			  sql_key, 'e', "legacy-2", false);
	ck_assert_str_eq(other, "key_conflict||||||");
	char *snap2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	free(other);
	free(again);
	free(sql_key);
	free(snap);
	free(filed);
}
END_TEST

START_TEST(report_refuses_in_the_same_words_and_writes_nothing)
{
	char *snap = wr_super(WR_SNAPSHOT);
	static const char *const forbidden[][2] = {{"dev", "customer-care-assistant"},
						   {"fleet-sync", "customer-care-assistant"},
						   {"marie", "developer-ide"},
						   {"nobody", "customer-care-assistant"}};
	for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++) {
		char *v = wr_report(forbidden[i][0], forbidden[i][1],
				    WR_ARGS(WR_BIKE_OK, "flat_tire"), "NULL", '4', "forbidden",
				    false);
		ck_assert_msg(strcmp(v, "forbidden||||||") == 0, "%s via %s: %s", forbidden[i][0],
			      forbidden[i][1], v);
		free(v);
	}
	/* Another region's bike reads exactly like one that does not exist. */
	char *lyo = wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_LYO, "flat_tire"),
			      "NULL", '5', "not-found", false);
	char *none = wr_report("marie", "customer-care-assistant",
			       WR_ARGS("VL-999999", "flat_tire"), "NULL", '5', "not-found", false);
	ck_assert_str_eq(lyo, "not_found||||||");
	ck_assert_str_eq(none, lyo);
	/* Arguments of the wrong shape (the server's input schema refuses them first). */
	static const char *const shapes[] = {"[]", "{\"bikeId\": 4601, \"issue\": \"flat_tire\"}",
					     "{\"bikeId\": \"" WR_BIKE_OK "\"}",
					     "{\"bikeId\": \"" WR_BIKE_OK
					     "\", \"issue\": \"other\", \"description\": null}"};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		char *v = wr_report("marie", "customer-care-assistant", shapes[i], "NULL", '6',
				    "invalid", false);
		ck_assert_msg(strcmp(v, "invalid_arguments||||||") == 0, "%s: %s", shapes[i], v);
		free(v);
	}
	char *snap2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap, snap2);
	char *audit = wr_super("SELECT string_agg(outcome || ':' || count, ' ' ORDER BY outcome)"
			       " FROM (SELECT outcome, count(*) FROM fleet.audit_log WHERE"
			       " request_id IN ('it-writes-forbidden', 'it-writes-not-found',"
			       " 'it-writes-invalid') GROUP BY outcome) a");
	ck_assert_str_eq(audit, "denied:4 invalid:4 not_found:2");
	free(audit);
	free(snap2);
	free(none);
	free(lyo);
	free(snap);
}
END_TEST

START_TEST(report_holds_the_case_rules)
{
	char args[256], cse[64], ops_case[64];
	char *first =
		wr_report("marie", "customer-care-assistant", WR_ARGS(WR_BIKE_CASE, "chain_broken"),
			  "NULL", '7', "case-1", false);
	wr_field(first, 5, cse, sizeof cse);
	ck_assert_msg(strncmp(cse, "IC-", 3) == 0, "%s", first);
	char *snap = wr_super(WR_SNAPSHOT);
	/* The case of another bike. */
	snprintf(args, sizeof args,
		 "{\"bikeId\": \"" WR_BIKE_ASK "\", \"issue\": \"other\", \"caseId\": \"%s\"}",
		 cse);
	char *other =
		wr_report("marie", "customer-care-assistant", args, "NULL", '7', "case-2", false);
	ck_assert_str_eq(other, "case_other_bike|FR-PAR|||||");
	char *snap2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap, snap2);
	/* A case that does not exist, and one marie neither opened nor reported into: alike. */
	char *ops = wr_report("olivia", "ops-assistant", WR_ARGS(WR_BIKE_OPS, "other"), "NULL", '7',
			      "case-3", false);
	wr_field(ops, 5, ops_case, sizeof ops_case);
	ck_assert_msg(strncmp(ops, "ok|", 3) == 0, "%s", ops);
	char *snap_ops = wr_super(WR_SNAPSHOT);
	snprintf(args, sizeof args,
		 "{\"bikeId\": \"" WR_BIKE_OPS "\", \"issue\": \"other\", \"caseId\": \"%s\"}",
		 ops_case);
	char *hidden =
		wr_report("marie", "customer-care-assistant", args, "NULL", '7', "case-4", false);
	char *missing = wr_report("marie", "customer-care-assistant",
				  "{\"bikeId\": \"" WR_BIKE_OPS
				  "\", \"issue\": \"other\", \"caseId\": \"IC-99999999\"}",
				  "NULL", '7', "case-4", false);
	ck_assert_str_eq(hidden, "case_not_found|FR-PAR|||||");
	ck_assert_str_eq(missing, hidden);
	char *snap_ops2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap_ops, snap_ops2);
	/* A closed case. */
	free(wr_super("UPDATE fleet.cases SET state = 'closed', closed_at = now() WHERE case_id ="
		      " '%s'",
		      ops_case));
	char *snap_closed = wr_super(WR_SNAPSHOT);
	char *closed = wr_report("olivia", "ops-assistant", args, "NULL", '7', "case-5", false);
	ck_assert_str_eq(closed, "case_closed|FR-PAR|||||");
	char *after = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(after, snap_closed);
	char *audit = wr_super("SELECT string_agg(detail, ' ' ORDER BY audit_id) FROM"
			       " fleet.audit_log WHERE request_id LIKE 'it-writes-case-%%' AND"
			       " outcome = 'failed'");
	ck_assert_str_eq(audit, "case_other_bike case_not_found case_not_found case_closed");
	free(audit);
	free(after);
	free(closed);
	free(snap_closed);
	free(snap_ops2);
	free(missing);
	free(hidden);
	free(snap_ops);
	free(ops);
	free(snap2);
	free(other);
	free(snap);
	free(first);
}
END_TEST

START_TEST(report_asks_first_saying_what_it_would_do)
{
	char *snap = wr_super(WR_SNAPSHOT);
	char *ask = wr_report("marie", "careful-assistant", WR_ARGS(WR_BIKE_ASK, "flat_tire"),
			      "NULL", '8', "ask-1", false);
	ck_assert_str_eq(ask,
			 "confirmation_required|FR-PAR|||||File a damage report \"flat tire\""
			 " on bike " WR_BIKE_ASK " (Paris)? The bike becomes unavailable (it is"
			 " available now), and a new investigation case is opened.");
	char *repair = wr_report("marie", "careful-assistant", WR_ARGS(WR_BIKE_REPAIR, "other"),
				 "NULL", '8', "ask-2", false);
	ck_assert_str_eq(repair,
			 "confirmation_required|FR-PAR|||||File a damage report \"other\""
			 " on bike " WR_BIKE_REPAIR " (Paris)? The bike stays in repair, and a"
			 " new investigation case is opened.");
	char *snap2 = wr_super(WR_SNAPSHOT);
	ck_assert_str_eq(snap, snap2);
	/* Confirmed: filed; asked again, the question names the open case. */
	char *done = wr_report("marie", "careful-assistant", WR_ARGS(WR_BIKE_ASK, "flat_tire"),
			       "NULL", '8', "ask-3", true);
	char cse[64], want[512];
	wr_field(done, 5, cse, sizeof cse);
	ck_assert_msg(strncmp(done, "ok|", 3) == 0 && strncmp(cse, "IC-", 3) == 0, "%s", done);
	char *again = wr_report("marie", "careful-assistant", WR_ARGS(WR_BIKE_ASK, "frame_damage"),
				"NULL", '8', "ask-4", false);
	snprintf(want, sizeof want,
		 "confirmation_required|FR-PAR|||||File a damage report \"frame damage\" on "
		 "bike " WR_BIKE_ASK
		 " (Paris)? The bike stays unavailable, and the report is added to"
		 " case %s, which is open.",
		 cse);
	ck_assert_str_eq(again, want);
	char *audit = wr_super("SELECT string_agg(outcome, ' ' ORDER BY audit_id) FROM"
			       " fleet.audit_log WHERE request_id LIKE 'it-writes-ask-%%'");
	ck_assert_str_eq(audit, "confirmation_required confirmation_required ok"
				" confirmation_required");
	free(audit);
	free(again);
	free(done);
	free(snap2);
	free(repair);
	free(ask);
	free(snap);
}
END_TEST

/* ---- reads by role ------------------------------------------------------------------------ */

/* What a server acting as subject through client reads (get_bike_status of WR_BIKE_CASE,
 * bikaroo://fleet/status-codes, bikaroo://cases/cse), as "bikes statuses cases": how many bikes,
 * status codes and cases it answered (new string). */
static char *wr_reads(const char *subject, const char *client, const char *cse)
{
	char se[64], ce[64];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", client);
	const char *env[] = {se, ce, NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	struct it_response r;
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"" WR_BIKE_CASE "\"}", &r);
	json_t *res = json_object_get(r.json, "result");
	ck_assert_msg(res != NULL, "%s", r.body);
	int bikes = json_is_false(json_object_get(res, "isError"));
	it_response_free(&r);
	it_mcp(s.port, "resources/read", "bikaroo://fleet/status-codes",
	       "\"uri\":\"bikaroo://fleet/status-codes\"", &r);
	json_t *c =
		json_array_get(json_object_get(json_object_get(r.json, "result"), "contents"), 0);
	json_t *doc = json_loads(json_string_value(json_object_get(c, "text")), 0, NULL);
	ck_assert_msg(doc != NULL, "%s", r.body);
	size_t codes = json_array_size(json_object_get(doc, "statusCodes"));
	json_decref(doc);
	it_response_free(&r);
	char *uri = mem_printf("bikaroo://cases/%s", cse);
	char *params = mem_printf("\"uri\":\"%s\"", uri);
	it_mcp(s.port, "resources/read", uri, params, &r);
	int cases = json_object_get(r.json, "result") != NULL;
	it_response_free(&r);
	free(params);
	free(uri);
	ck_assert_int_eq(it_server_stop(&s), 0);
	return mem_printf("%d %zu %d", bikes, codes, cases);
}

/* Who may use a read is judged by the database too: the server's statement reads nothing for a
 * role that the capability's row of fleet.capabilities does not list, even when the server's
 * own rules (the declaration's roles) allow it, and the call's audit row says denied. */
START_TEST(reads_answer_nothing_to_a_role_their_capability_does_not_list)
{
	char *cse = wr_super("SELECT max(case_id) FROM fleet.damage_reports WHERE reported_by ="
			     " 'marie' AND region = 'FR-PAR'");
	if (!*cse) { /* a case of marie's own, for bikaroo://cases/{caseId} */
		char *v = wr_report("marie", "customer-care-assistant",
				    WR_ARGS(WR_BIKE_CASE, "other"), "NULL", '9', "reads", false);
		free(cse);
		cse = wr_super("SELECT max(case_id) FROM fleet.damage_reports WHERE reported_by ="
			       " 'marie' AND region = 'FR-PAR'");
		free(v);
	}
	char *before = wr_reads("marie", "customer-care-assistant", cse);
	ck_assert_str_eq(before, "1 7 1");
	free(wr_super("UPDATE fleet.capabilities SET roles = '{viewer,fleet_operator}' WHERE name"
		      " IN ('bike_status', 'status_codes', 'cases')"));
	char *after = wr_reads("marie", "customer-care-assistant", cse);
	ck_assert_str_eq(after, "0 0 0");
	char *outcome = wr_super("SELECT outcome FROM fleet.audit_log WHERE subject = 'marie' AND"
				 " tool = 'get_bike_status' AND target = '" WR_BIKE_CASE "'"
				 " ORDER BY audit_id DESC LIMIT 1");
	ck_assert_str_eq(outcome, "denied");
	/* Another role the rows still list reads as before. */
	char *olivia = wr_reads("olivia", "ops-assistant", cse);
	ck_assert_str_eq(olivia, "1 7 1");
	free(olivia);
	free(outcome);
	free(after);
	free(before);
	free(cse);
}
END_TEST

/* ---- migrate records the declared capabilities ------------------------------------------- */

START_TEST(migrate_makes_the_capabilities_the_declared_rows)
{
	/* What the suite's database was migrated with (scripts/test.sh): the declared rows. */
	char *declared = wr_super("SELECT string_agg(concat_ws(' ', name, roles, scope,"
				  " people_only, confirmation), ', ' ORDER BY name) FROM"
				  " fleet.capabilities WHERE name NOT LIKE '" WR_CAPS "'");
	free(wr_super("INSERT INTO fleet.capabilities (name, roles, scope, people_only,"
		      " confirmation) VALUES ('it_writes_gone', '{viewer}', 'fleet:read', false,"
		      " 'never');"
		      " UPDATE fleet.capabilities SET roles = '{viewer}', confirmation = 'always'"
		      " WHERE name = 'damage_report'"));
	char *epoch = wr_super("SELECT epoch FROM fleet.rights_epoch");
	char *url = mem_printf("BIKAROO_MIGRATE_URL=%s", it_env("BIKAROO_MIGRATE_URL"));
	const char *env[] = {url, NULL};
	ck_assert_int_eq(it_run("migrate", env), 0);
	char *now = wr_super("SELECT string_agg(concat_ws(' ', name, roles, scope, people_only,"
			     " confirmation), ', ' ORDER BY name) FROM fleet.capabilities");
	ck_assert_str_eq(now, declared);
	ck_assert_ptr_nonnull(strstr(declared, "damage_report {customer_care,fleet_operator}"));
	/* Changed rows are changed rights: cached rights are resolved again. */
	char *epoch2 = wr_super("SELECT epoch FROM fleet.rights_epoch");
	ck_assert_str_ne(epoch, epoch2);
	free(epoch2);
	free(now);
	free(url);
	free(epoch);
	free(declared);
}
END_TEST

CHECK_SUITE(writes)
{
	Suite *s = suite_create("writes");
	TCase *tc = tcase_create("write-pattern");
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, wr_suite_setup, wr_suite_teardown);
	tcase_add_checked_fixture(tc, wr_setup, NULL);
	tcase_add_test(tc, may_use_follows_roles_people_and_the_client_right);
	tcase_add_test(tc, write_begin_fixes_the_right_the_write_policies_require);
	tcase_add_test(tc, write_asks_follows_the_declared_policy);
	tcase_add_test(tc, the_key_is_claimed_kept_replayed_and_refused_for_another_call);
	tcase_add_test(tc, the_key_lock_serializes_two_sessions);
	tcase_add_test(tc, report_files_extends_replays_and_refuses_a_reused_key);
	tcase_add_test(tc, report_replays_a_key_the_previous_release_recorded);
	tcase_add_test(tc, report_refuses_in_the_same_words_and_writes_nothing);
	tcase_add_test(tc, report_holds_the_case_rules);
	tcase_add_test(tc, report_asks_first_saying_what_it_would_do);
	tcase_add_test(tc, reads_answer_nothing_to_a_role_their_capability_does_not_list);
	tcase_add_test(tc, migrate_makes_the_capabilities_the_declared_rows);
	suite_add_tcase(s, tc);
	return s;
}
