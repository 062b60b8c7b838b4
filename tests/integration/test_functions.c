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

CHECK_SUITE(functions)
{
	Suite *s = suite_create("functions");
	TCase *tc = tcase_create("report_damage_as");
	tcase_add_test(tc, unconfirmed_report_says_the_status_it_would_leave);
	suite_add_tcase(s, tc);
	TCase *feed = tcase_create("notify_resource_change");
	tcase_add_test(feed, change_feed_names_entities_not_uris);
	suite_add_tcase(s, feed);
	return s;
}
