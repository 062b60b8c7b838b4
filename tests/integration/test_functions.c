/* Integration tests of the SQL functions of migrations/functions/, called directly as the
 * server's login role: what the database answers before any C looks at it. */
#include <check.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* report_damage_as for marie through careful-assistant (which needs confirmation), unconfirmed:
 * "outcome status_before status" (new string). */
static char *fn_unconfirmed_report(const char *bike)
{
	char *sql = mem_printf("SELECT out_outcome || ' ' || out_status_before || ' ' || out_status"
			       " FROM fleet.report_damage_as('marie', 'careful-assistant', '%s', "
			       "'flat_tire', NULL,"
			       " NULL, NULL, repeat('0', 64), 'it-functions', false)",
			       bike);
	char *row = it_sql_as_app(sql);
	free(sql);
	ck_assert_ptr_nonnull(row);
	return row;
}

START_TEST(unconfirmed_report_says_the_status_it_would_leave)
{
	char *reports = it_sql("SELECT count(*) FROM fleet.damage_reports");
	/* The database's one rule: a bike in repair, lost or retired keeps its status ... */
	char *kept = fn_unconfirmed_report("VL-1037");
	ck_assert_str_eq(kept, "confirmation_required in_repair in_repair");
	/* ... any other becomes unavailable. */
	char *taken = fn_unconfirmed_report("VL-2051");
	ck_assert_str_eq(taken, "confirmation_required available unavailable");
	/* Nothing was written. */
	char *reports2 = it_sql("SELECT count(*) FROM fleet.damage_reports");
	ck_assert_str_eq(reports, reports2);
	free(reports2);
	free(taken);
	free(kept);
	free(reports);
}
END_TEST

/* The payloads heard on bikaroo_changes while sql runs as the superuser, joined by " "
 * (new string). */
static char *fn_changes_during(const char *sql)
{
	PGconn *pg = PQconnectdb(it_env("DATABASE_URL"));
	ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
	PQclear(PQexec(pg, "LISTEN bikaroo_changes"));
	free(it_sql(sql));
	char *heard = mem_strdup("");
	/* Delivered at the writer's commit, before it_sql returned: a few polls suffice. */
	for (int poll = 0; poll < 50; poll++) {
		PQconsumeInput(pg);
		for (PGnotify *n; (n = PQnotifies(pg)) != NULL; PQfreemem(n)) {
			char *more = mem_printf("%s%s%s", heard, *heard ? " " : "", n->extra);
			free(heard);
			heard = more;
		}
		if (*heard)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	PQfinish(pg);
	return heard;
}

START_TEST(change_feed_names_entities_not_uris)
{
	char *bike = fn_changes_during(
		"UPDATE fleet.bikes SET battery_pct = 100 - battery_pct WHERE bike_id = 'VL-2051'");
	ck_assert_str_eq(bike, "bike:VL-2051");
	free(it_sql("UPDATE fleet.bikes SET battery_pct = 100 - battery_pct "
		    "WHERE bike_id = 'VL-2051'"));
	char *codes = fn_changes_during(
		"UPDATE fleet.status_codes SET label = label WHERE code = 'lost'");
	ck_assert_str_eq(codes, "status_codes");
	free(codes);
	free(bike);
}
END_TEST

/* ---- the audit log's formats ------------------------------------------------------------ */

/* One direct INSERT into fleet.audit_log, as the superuser (no function in between), of a row
 * of subject it-audit-format with these SQL values: whether it was stored. */
static bool fn_audit_stored(const char *digest, const char *outcome, const char *trace,
			    const char *token)
{
	char *sql = mem_printf("INSERT INTO fleet.audit_log (subject, client_id, tool, args_digest,"
			       " outcome, trace_id, token_ref) VALUES ('it-audit-format', 'c', 't',"
			       " %s, %s, %s, %s)",
			       digest, outcome, trace, token);
	char *v = it_sql(sql);
	free(sql);
	free(v);
	return v != NULL;
}

#define FN_HEX64 "repeat('0123456789abcdef', 4)"
#define FN_HEX32 "repeat('0123456789abcdef', 2)"

/* A malformed audit row is refused whoever writes it (the formats hold for the table, not for one
 * writer), and so is a batch of read rows with one malformed entry; well-formed rows are kept. */
START_TEST(the_audit_log_refuses_a_malformed_row)
{
	free(it_sql("DELETE FROM fleet.audit_log WHERE subject = 'it-audit-format'"));
	ck_assert(fn_audit_stored(FN_HEX64, "'ok'", "NULL", "NULL"));
	ck_assert(fn_audit_stored(FN_HEX64, "'not_found'", FN_HEX32, "'jti:a-1.b_2~'"));
	ck_assert(fn_audit_stored(FN_HEX64, "'denied'", "NULL", "'sha256:' || " FN_HEX64));
	static const char *const bad[][4] = {
		{"left(" FN_HEX64 ", 63)", "'ok'", "NULL", "NULL"},
		{"upper(" FN_HEX64 ")", "'ok'", "NULL", "NULL"},
		{"NULL", "'ok'", "NULL", "NULL"},
		{FN_HEX64, "'maybe'", "NULL", "NULL"},
		{FN_HEX64, "NULL", "NULL", "NULL"},
		{FN_HEX64, "'ok'", "'xyz'", "NULL"},
		{FN_HEX64, "'ok'", "upper(" FN_HEX32 ")", "NULL"},
		{FN_HEX64, "'ok'", FN_HEX32 " || '0'", "NULL"},
		{FN_HEX64, "'ok'", "NULL", "'Bearer abc'"},
		{FN_HEX64, "'ok'", "NULL", "'jti:'"},
		{FN_HEX64, "'ok'", "NULL", "'jti:a b'"},
		{FN_HEX64, "'ok'", "NULL", "'jti:' || repeat('a', 129)"},
		{FN_HEX64, "'ok'", "NULL", "'sha256:' || left(" FN_HEX64 ", 63)"},
		{FN_HEX64, "'ok'", "NULL", "'sha256:' || upper(" FN_HEX64 ")"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(!fn_audit_stored(bad[i][0], bad[i][1], bad[i][2], bad[i][3]),
			      "stored: digest %s, outcome %s, trace %s, token %s", bad[i][0],
			      bad[i][1], bad[i][2], bad[i][3]);
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.audit_log WHERE subject ="
				  " 'it-audit-format'"),
			 3);
	/* Through the writers of the login role: a read batch's rows, one entry malformed. */
	char *v = it_sql_as_app(
		"SELECT fleet.audit_reads('it-audit-format', 'c', '[{\"tool\": \"t\", \"key\":"
		" \"k\", \"digest\": \""
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		"\", \"id\": \"1\"}, {\"tool\": \"t\", \"key\": \"k\", \"digest\": \"0\","
		" \"id\": \"2\"}]', true, '{k}')");
	ck_assert_ptr_null(v);
	v = it_sql_as_app(
		"SELECT fleet.act_as('marie', 'customer-care-assistant');"
		"SELECT fleet.audit_record('t', NULL, 'not a digest', 'ok', NULL, '1', NULL)");
	ck_assert_ptr_null(v);
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.audit_log WHERE subject ="
				  " 'it-audit-format' OR args_digest = 'not a digest'"),
			 3);
	free(it_sql("DELETE FROM fleet.audit_log WHERE subject = 'it-audit-format'"));
}
END_TEST

/* A session's temporary tables never stand in for the rights' tables: PostgreSQL searches the
 * session's temporary schema before any schema of search_path unless the path names it, so a
 * fleet_app session holding a temporary principals, principal_regions, client_apps and
 * rights_epoch (the current epoch, so the forgery would be cached for the whole backend) would
 * make marie an administrator of every region, were act_as to name its tables without schema.
 * It answers marie's own rights, now and from the cache on the next call of the session. */
START_TEST(act_as_reads_rights_from_fleet_not_from_temporary_tables)
{
	char *v = it_sql_as_app_then(
		"CREATE TEMP TABLE principals (subject text, role text, is_human boolean,"
		" active boolean);"
		"INSERT INTO principals VALUES ('marie', 'fleet_admin', true, true);"
		"CREATE TEMP TABLE principal_regions (subject text, region text);"
		"INSERT INTO principal_regions VALUES ('marie', 'BE-BRU'), ('marie', 'FR-LYO'),"
		" ('marie', 'FR-PAR');"
		"CREATE TEMP TABLE client_apps (client_id text, may_read boolean,"
		" may_report boolean, requires_confirmation boolean, active boolean);"
		"INSERT INTO client_apps VALUES ('customer-care-assistant', true, true, false, "
		"true);"
		"CREATE TEMP TABLE rights_epoch AS SELECT epoch FROM fleet.rights_epoch;"
		"SELECT a.role FROM fleet.act_as('marie', 'customer-care-assistant') AS a",
		"SELECT a.role || ' ' || array_to_string(a.regions, ',') || ' '"
		" || current_setting('app.regions')"
		" FROM fleet.act_as('marie', 'customer-care-assistant') AS a");
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v, "customer_care FR-PAR FR-PAR");
	free(v);
}
END_TEST

/* Every function of the schema that runs as its owner (SECURITY DEFINER) or fixes its search_path
 * fixes it with pg_temp last: otherwise PostgreSQL searches the session's temporary schema first
 * for tables, and a temporary table of the login role's session would stand in for the owner's
 * (act_as_reads_rights_from_fleet_not_from_temporary_tables shows what that forges). */
START_TEST(every_fixed_search_path_puts_temporary_tables_last)
{
	char *bad = it_sql("SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), 'none') "
			   "FROM pg_proc p"
			   " JOIN pg_namespace n ON n.oid = p.pronamespace"
			   " WHERE n.nspname IN ('fleet', 'fleet_meta')"
			   " AND (p.prosecdef OR EXISTS (SELECT 1 FROM unnest(p.proconfig) c"
			   "  WHERE c LIKE 'search_path=%'))"
			   " AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c"
			   "  WHERE c ~ '^search_path=.*pg_temp$')");
	ck_assert_ptr_nonnull(bad);
	ck_assert_msg(strcmp(bad, "none") == 0,
		      "functions whose search_path lets temporary tables in first: %s", bad);
	free(bad);
}
END_TEST

CHECK_SUITE(functions)
{
	Suite *s = suite_create("functions");
	TCase *tc = tcase_create("report_damage_as");
	tcase_add_test(tc, unconfirmed_report_says_the_status_it_would_leave);
	suite_add_tcase(s, tc);
	TCase *feed = tcase_create("notify_resource_change");
	tcase_add_test(feed, change_feed_names_entities_not_uris);
	suite_add_tcase(s, feed);
	TCase *audit = tcase_create("audit_log");
	tcase_set_timeout(audit, 60); /* a connection per row tried */
	tcase_add_test(audit, the_audit_log_refuses_a_malformed_row);
	suite_add_tcase(s, audit);
	TCase *act = tcase_create("act_as");
	tcase_add_test(act, act_as_reads_rights_from_fleet_not_from_temporary_tables);
	tcase_add_test(act, every_fixed_search_path_puts_temporary_tables_last);
	suite_add_tcase(s, act);
	return s;
}
